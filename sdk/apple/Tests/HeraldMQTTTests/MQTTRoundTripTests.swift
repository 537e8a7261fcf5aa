import HeraldMQTT
import NIOCore
import Testing

@Suite("Encoding then decoding gives the same packet")
struct MQTTRoundTripTests {
    static let packets: [MQTTPacket] = [
        .connect(MQTTPacket.Connect(clientID: "device-1")),
        .connect(MQTTPacket.Connect(clientID: "", cleanSession: true, keepAlive: 0)),
        .connect(
            MQTTPacket.Connect(
                clientID: "ünïcode-☃",
                cleanSession: false,
                keepAlive: 65535,
                will: .init(topic: "status/device-1", message: buffer("offline"), qos: .atLeastOnce, retain: true),
                username: "user",
                password: buffer([0x00, 0xFF, 0xC3, 0x28])
            )
        ),
        .connect(
            MQTTPacket.Connect(
                clientID: "c",
                will: .init(topic: "w", message: ByteBuffer(), qos: .exactlyOnce),
                username: ""
            )
        ),
        .connect(MQTTPacket.Connect(clientID: "c", username: "u", password: ByteBuffer())),
        .connAck(MQTTPacket.ConnAck(returnCode: .accepted)),
        .connAck(MQTTPacket.ConnAck(sessionPresent: true, returnCode: .accepted)),
        .connAck(MQTTPacket.ConnAck(returnCode: .notAuthorized)),
        .publish(MQTTPacket.Publish(topic: "a", payload: ByteBuffer())),
        .publish(MQTTPacket.Publish(topic: "a/b/c", payload: buffer("hello"), retain: true)),
        .publish(MQTTPacket.Publish(topic: "$SYS/x", payload: buffer([0]), qos: .atLeastOnce, packetID: 1, dup: true)),
        .publish(MQTTPacket.Publish(topic: "/", payload: ByteBuffer(), qos: .exactlyOnce, packetID: 65535)),
        .pubAck(packetID: 1),
        .pubAck(packetID: 65535),
        .pubRec(packetID: 2),
        .pubRel(packetID: 3),
        .pubComp(packetID: 65535),
        .subscribe(MQTTPacket.Subscribe(packetID: 65535, subscriptions: [.init(topicFilter: "#", qos: .atMostOnce)])),
        .subscribe(
            MQTTPacket.Subscribe(
                packetID: 7,
                subscriptions: [
                    .init(topicFilter: "a/+/c", qos: .atLeastOnce),
                    .init(topicFilter: "+", qos: .exactlyOnce),
                    .init(topicFilter: "a/#", qos: .atMostOnce),
                    .init(topicFilter: "/+/", qos: .atLeastOnce),
                ]
            )
        ),
        .subAck(MQTTPacket.SubAck(packetID: 7, returnCodes: [.grantedQoS0, .grantedQoS1, .grantedQoS2, .failure])),
        .subAck(MQTTPacket.SubAck(packetID: 65535, returnCodes: [.failure])),
        .unsubscribe(MQTTPacket.Unsubscribe(packetID: 9, topicFilters: ["a/#", "b/+", "c"])),
        .unsubAck(packetID: 65535),
        .pingReq,
        .pingResp,
        .disconnect,
    ]

    @Test("every packet type survives a round trip", arguments: Self.packets)
    func roundTrip(_ packet: MQTTPacket) throws {
        var wire = try encode(packet)
        var decoder = MQTTPacketDecoder(maximumPacketSize: 1 << 20)
        let decoded = try decoder.decode(buffer: &wire)
        #expect(decoded == packet)
        #expect(wire.readableBytes == 0)
    }

    @Test("the packets cover every packet type")
    func coverage() {
        #expect(Set(Self.packets.map(\.type)) == Set(MQTTPacketType.allCases))
    }

    @Test(
        "remaining lengths at the varint boundaries encode to the spec's bytes",
        arguments: [
            (127, [0x7F]),
            (128, [0x80, 0x01]),
            (16383, [0xFF, 0x7F]),
            (16384, [0x80, 0x80, 0x01]),
            (2_097_151, [0xFF, 0xFF, 0x7F]),
            (2_097_152, [0x80, 0x80, 0x80, 0x01]),
        ] as [(Int, [UInt8])]
    )
    func remainingLengthBoundaries(remainingLength: Int, lengthBytes: [UInt8]) throws {
        // Topic "t" takes 3 bytes of the remaining length; the payload fills the rest.
        let payload = ByteBuffer(repeating: 0xAB, count: remainingLength - 3)
        let packet = MQTTPacket.publish(MQTTPacket.Publish(topic: "t", payload: payload))
        var wire = try encode(packet)

        #expect(wire.readableBytes == 1 + lengthBytes.count + remainingLength)
        #expect(Array(wire.readableBytesView.prefix(1 + lengthBytes.count)) == [0x30] + lengthBytes)

        var decoder = MQTTPacketDecoder(maximumPacketSize: 1 + lengthBytes.count + remainingLength)
        #expect(try decoder.decode(buffer: &wire) == packet)
    }

    @Test("a PUBLISH payload is written as is after an already-used buffer's reader index")
    func publishPayloadSliceIsWrittenFromReaderIndex() throws {
        var payload = buffer("xxpayload")
        payload.moveReaderIndex(forwardBy: 2)
        let publish = MQTTPacket.publish(MQTTPacket.Publish(topic: "t", payload: payload))
        #expect(try encodedBytes(publish) == packet(0x30, field("t") + Array("payload".utf8)))
        #expect(try decode(encodedBytes(publish)) == publish)
    }

    @Test("the channel encoder writes the same bytes as write(_:into:)")
    func messageToByteEncoderMatchesWrite() throws {
        let packet = MQTTPacket.subAck(MQTTPacket.SubAck(packetID: 3, returnCodes: [.grantedQoS1]))
        var out = ByteBuffer()
        try MQTTPacketEncoder().encode(data: packet, out: &out)
        #expect(out == (try encode(packet)))
    }

    @Test("SUBACK codes grant the QoS they name, and failure grants none")
    func subAckReturnCodeQoS() {
        for qos in MQTTQoS.allCases {
            #expect(MQTTPacket.SubAck.ReturnCode(granted: qos).grantedQoS == qos)
        }
        #expect(MQTTPacket.SubAck.ReturnCode.failure.grantedQoS == nil)
        #expect(MQTTPacket.SubAck.ReturnCode.failure.rawValue == 0x80)
    }
}
