import HeraldMQTT
import NIOCore
import Testing

@Suite("MQTTPacketReader")
struct MQTTPacketReaderTests {
    static let stream: [MQTTPacket] = [
        .connect(.init(clientID: "dev", keepAlive: 30, username: "u", password: buffer("secret"))),
        .publish(.init(topic: "herald/dev/events", payload: ByteBuffer(repeating: 7, count: 300), qos: .atLeastOnce, packetID: 42)),
        .pubAck(packetID: 1),
        .pubAck(packetID: 2),
        .pingReq,
        .subscribe(.init(packetID: 3, subscriptions: [.init(topicFilter: "herald/dev/push", qos: .atLeastOnce)])),
        .disconnect,
    ]

    static func wire() throws -> [UInt8] {
        try stream.flatMap { try encodedBytes($0) }
    }

    /// Feeds `bytes` in pieces of `size` and collects every packet as soon as it is whole.
    static func read(_ bytes: [UInt8], in size: Int) throws -> [MQTTPacket] {
        var reader = MQTTPacketReader(maximumPacketSize: 1024)
        var packets: [MQTTPacket] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + size, bytes.count)
            reader.append(buffer(Array(bytes[offset..<end])))
            while let packet = try reader.next() { packets.append(packet) }
            offset = end
        }
        #expect(reader.bufferedBytes == 0)
        return packets
    }

    @Test("a stream read in pieces of any size yields the same packets, in order")
    func piecesOfAnySize() throws {
        let bytes = try Self.wire()
        for size in [1, 2, 3, 5, 7, 64, 333, bytes.count] {
            #expect(try Self.read(bytes, in: size) == Self.stream)
        }
    }

    @Test("nothing is held once every packet read is decoded; a partial one keeps only its own bytes")
    func holdsOnlyIncompletePackets() throws {
        var reader = MQTTPacketReader(maximumPacketSize: 1024)
        let publish = try encodedBytes(Self.stream[1])
        reader.append(buffer(try encodedBytes(.pingReq) + Array(publish.prefix(10))))
        #expect(try reader.next() == .pingReq)
        #expect(try reader.next() == nil)
        #expect(reader.bufferedBytes == 10)
        reader.append(buffer(Array(publish.dropFirst(10))))
        #expect(try reader.next() == Self.stream[1])
        #expect(try reader.next() == nil)
        #expect(reader.bufferedBytes == 0)
    }

    @Test("malformed input and oversized packets throw")
    func malformedInputThrows() throws {
        var reader = MQTTPacketReader(maximumPacketSize: 64)
        reader.append(buffer([0x30, 0x7F]))  // a PUBLISH of 129 bytes: over the limit
        #expect(throws: MQTTProtocolError.packetTooLarge) { try reader.next() }

        var garbage = MQTTPacketReader(maximumPacketSize: 64)
        garbage.append(buffer([0x00, 0x00]))  // packet type 0 is reserved
        #expect(throws: MQTTProtocolError.self) { try garbage.next() }
    }
}
