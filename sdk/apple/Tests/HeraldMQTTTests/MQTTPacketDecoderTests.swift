import HeraldMQTT
import NIOCore
import NIOTestUtils
import Testing

@Suite("MQTTPacketDecoder framing")
struct MQTTPacketDecoderTests {
    @Test("drip-fed, batched and whole packets all decode the same")
    func verifierDripFeedsPackets() throws {
        let packets: [MQTTPacket] = [
            .connect(.init(clientID: "dev", keepAlive: 30, username: "u", password: buffer("secret"))),
            .connAck(.init(returnCode: .accepted)),
            .publish(.init(topic: "a/b", payload: buffer("hello"), qos: .atLeastOnce, packetID: 42)),
            .publish(.init(topic: "big", payload: ByteBuffer(repeating: 7, count: 300))),
            .pubAck(packetID: 42),
            .pubRec(packetID: 43),
            .pubRel(packetID: 43),
            .subscribe(.init(packetID: 1, subscriptions: [.init(topicFilter: "a/#", qos: .atLeastOnce)])),
            .subAck(.init(packetID: 1, returnCodes: [.grantedQoS1])),
            .unsubscribe(.init(packetID: 2, topicFilters: ["a/#"])),
            .unsubAck(packetID: 2),
            .pingReq,
            .pingResp,
            .disconnect,
        ]
        let pairs = try packets.map { (try encode($0), [$0]) }
        try ByteToMessageDecoderVerifier.verifyDecoder(inputOutputPairs: pairs) {
            MQTTPacketDecoder(maximumPacketSize: 1024)
        }
    }

    @Test("several packets in one read come out one per step")
    func severalPacketsInOneBuffer() throws {
        var input = try encode(.pingReq)
        var second = try encode(.pubAck(packetID: 9))
        input.writeBuffer(&second)
        var decoder = MQTTPacketDecoder(maximumPacketSize: 16)
        #expect(try decoder.decode(buffer: &input) == .pingReq)
        #expect(try decoder.decode(buffer: &input) == .pubAck(packetID: 9))
        #expect(try decoder.decode(buffer: &input) == nil)
    }

    @Test("every strict prefix of a valid packet asks for more data and consumes nothing")
    func prefixesNeedMoreData() throws {
        let packets: [MQTTPacket] = [
            .connect(.init(clientID: "c", will: .init(topic: "w", message: buffer("m")), username: "u", password: buffer("p"))),
            .publish(.init(topic: "t", payload: ByteBuffer(repeating: 1, count: 200), qos: .exactlyOnce, packetID: 5)),
            .subscribe(.init(packetID: 3, subscriptions: [.init(topicFilter: "+/x", qos: .exactlyOnce)])),
            .subAck(.init(packetID: 3, returnCodes: [.failure])),
        ]
        for packet in packets {
            let bytes = try encodedBytes(packet)
            for length in 0..<bytes.count {
                var input = buffer(Array(bytes.prefix(length)))
                var decoder = MQTTPacketDecoder(maximumPacketSize: 1024)
                #expect(try decoder.decode(buffer: &input) == nil)
                #expect(input.readerIndex == 0)
            }
        }
    }

    @Test("a declared size over the maximum is rejected once the header is read, before the body")
    func oversizedPacketRejectedAtHeader() throws {
        // PUBLISH with remaining length 1000 (E8 07) and none of its body; the maximum is 100.
        var decoder = MQTTPacketDecoder(maximumPacketSize: 100)
        var input = buffer([0x30, 0xE8])
        #expect(try decoder.decode(buffer: &input) == nil)
        input.writeInteger(UInt8(0x07))
        #expect(throws: MQTTProtocolError.packetTooLarge) { try decoder.decode(buffer: &input) }
    }

    @Test("the maximum counts the whole packet, fixed header included")
    func maximumIsInclusiveOfHeader() throws {
        // PUBACK is 4 bytes on the wire.
        let puback: [UInt8] = [0x40, 0x02, 0x00, 0x01]
        #expect(try decode(puback, maximumPacketSize: 4) == .pubAck(packetID: 1))
        #expect(throws: MQTTProtocolError.packetTooLarge) { try decode(puback, maximumPacketSize: 3) }
    }

    @Test("the largest remaining length is accepted up to the maximum")
    func largestRemainingLength() throws {
        // 268,435,455 in four bytes: the packet is that plus a 5-byte header.
        let header: [UInt8] = [0x30, 0xFF, 0xFF, 0xFF, 0x7F]
        #expect(try decode(header, maximumPacketSize: 268_435_460) == nil)
        #expect(throws: MQTTProtocolError.packetTooLarge) { try decode(header, maximumPacketSize: 268_435_459) }
    }

    @Test("a non-minimal remaining length is accepted")
    func nonMinimalRemainingLength() throws {
        #expect(try decode([0xC0, 0x80, 0x00]) == .pingReq)
    }

    @Test("random bytes never crash the decoder")
    func randomBytesNeverCrash() {
        var generator = SplitMix64(seed: 0x4D51_5454)
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...64, using: &generator)
            var input = ByteBuffer(bytes: (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
            var decoder = MQTTPacketDecoder(maximumPacketSize: 64)
            while true {
                do {
                    guard try decoder.decode(buffer: &input) != nil else { break }
                } catch {
                    break
                }
            }
        }
    }
}

/// A small seeded generator so the random test is reproducible.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) {
        self.state = seed
    }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
