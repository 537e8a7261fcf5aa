import HeraldMQTT
import NIOCore
import Testing

/// Hand-written bytes from the MQTT 3.1.1 specification's layouts.
@Suite("Packets match hand-written wire bytes")
struct MQTTWireFormatTests {
    static let cases: [(MQTTPacket, [UInt8])] = [
        (.connAck(.init(returnCode: .accepted)), [0x20, 0x02, 0x00, 0x00]),
        (.connAck(.init(sessionPresent: true, returnCode: .accepted)), [0x20, 0x02, 0x01, 0x00]),
        (.connAck(.init(returnCode: .unacceptableProtocolVersion)), [0x20, 0x02, 0x00, 0x01]),
        (.pingReq, [0xC0, 0x00]),
        (.pingResp, [0xD0, 0x00]),
        (.disconnect, [0xE0, 0x00]),
        (.pubAck(packetID: 10), [0x40, 0x02, 0x00, 0x0A]),
        (.pubRec(packetID: 0x1234), [0x50, 0x02, 0x12, 0x34]),
        (.pubRel(packetID: 5), [0x62, 0x02, 0x00, 0x05]),
        (.pubComp(packetID: 65535), [0x70, 0x02, 0xFF, 0xFF]),
        (.unsubAck(packetID: 1), [0xB0, 0x02, 0x00, 0x01]),
        (
            // PUBLISH QoS 1, topic "a/b", packet id 10, payload "hi".
            .publish(.init(topic: "a/b", payload: ByteBuffer(string: "hi"), qos: .atLeastOnce, packetID: 10)),
            [0x32, 0x09, 0x00, 0x03, 0x61, 0x2F, 0x62, 0x00, 0x0A, 0x68, 0x69]
        ),
        (
            // PUBLISH QoS 0, retained, DUP clear, empty payload.
            .publish(.init(topic: "x", payload: ByteBuffer(), retain: true)),
            [0x31, 0x03, 0x00, 0x01, 0x78]
        ),
        (
            // PUBLISH QoS 2 redelivery: DUP and QoS bits.
            .publish(.init(topic: "x", payload: ByteBuffer(), qos: .exactlyOnce, packetID: 1, dup: true)),
            [0x3C, 0x05, 0x00, 0x01, 0x78, 0x00, 0x01]
        ),
        (
            // CONNECT "herald", clean session, keep-alive 60.
            .connect(.init(clientID: "herald", cleanSession: true, keepAlive: 60)),
            [0x10, 0x12, 0x00, 0x04, 0x4D, 0x51, 0x54, 0x54, 0x04, 0x02, 0x00, 0x3C, 0x00, 0x06]
                + Array("herald".utf8)
        ),
        (
            // CONNECT with will (QoS 1, retain), user name and password: flags 0xEE.
            .connect(
                .init(
                    clientID: "c",
                    cleanSession: true,
                    keepAlive: 10,
                    will: .init(topic: "w", message: ByteBuffer(string: "m"), qos: .atLeastOnce, retain: true),
                    username: "u",
                    password: ByteBuffer(string: "p")
                )
            ),
            [
                0x10, 0x19, 0x00, 0x04, 0x4D, 0x51, 0x54, 0x54, 0x04, 0xEE, 0x00, 0x0A, 0x00, 0x01, 0x63,
                0x00, 0x01, 0x77, 0x00, 0x01, 0x6D, 0x00, 0x01, 0x75, 0x00, 0x01, 0x70,
            ]
        ),
        (
            // SUBSCRIBE id 1 to "a/#" at QoS 1.
            .subscribe(.init(packetID: 1, subscriptions: [.init(topicFilter: "a/#", qos: .atLeastOnce)])),
            [0x82, 0x08, 0x00, 0x01, 0x00, 0x03, 0x61, 0x2F, 0x23, 0x01]
        ),
        (
            // SUBACK id 1: granted QoS 1, then a failure.
            .subAck(.init(packetID: 1, returnCodes: [.grantedQoS1, .failure])),
            [0x90, 0x04, 0x00, 0x01, 0x01, 0x80]
        ),
        (
            // UNSUBSCRIBE id 2 from "a/b".
            .unsubscribe(.init(packetID: 2, topicFilters: ["a/b"])),
            [0xA2, 0x07, 0x00, 0x02, 0x00, 0x03, 0x61, 0x2F, 0x62]
        ),
    ]

    @Test("encoding writes exactly the spec's bytes", arguments: Self.cases)
    func encodesToSpecBytes(packet: MQTTPacket, bytes: [UInt8]) throws {
        #expect(try encodedBytes(packet) == bytes)
    }

    @Test("decoding the spec's bytes gives the packet", arguments: Self.cases)
    func decodesSpecBytes(packet: MQTTPacket, bytes: [UInt8]) throws {
        #expect(try decode(bytes) == packet)
    }

    @Test("a UTF-8 byte order mark in a string is kept, not stripped")
    func byteOrderMarkIsKept() throws {
        let topic: [UInt8] = [0xEF, 0xBB, 0xBF, 0x61]
        let decoded = try decode(packet(0x30, field(topic)))
        #expect(decoded == .publish(.init(topic: "\u{FEFF}a", payload: ByteBuffer())))
    }

    @Test("a decoded PUBLISH payload is a slice of the input, not a copy")
    func publishPayloadIsSliceOfInput() throws {
        var input = buffer(packet(0x30, field("t") + [1, 2, 3]))
        var decoder = MQTTPacketDecoder(maximumPacketSize: 100)
        guard case .publish(let publish) = try decoder.decode(buffer: &input) else {
            Issue.record("expected PUBLISH")
            return
        }
        // Header (2) and topic field (3) come before the payload in the same storage.
        let inputStart = input.withVeryUnsafeBytes { $0.baseAddress }
        let payloadStart = publish.payload.withVeryUnsafeBytes { $0.baseAddress }
        let sharesStorage = inputStart.map { $0 + 5 } == payloadStart
        #expect(sharesStorage)
        #expect(Array(publish.payload.readableBytesView) == [1, 2, 3])
    }
}
