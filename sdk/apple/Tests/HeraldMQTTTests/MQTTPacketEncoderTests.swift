import HeraldMQTT
import NIOCore
import Testing

/// A packet the encoder must refuse, and why.
struct UnencodableCase: Sendable, CustomTestStringConvertible {
    var name: String
    var packet: MQTTPacket
    var error: MQTTProtocolError

    init(_ name: String, _ packet: MQTTPacket, _ error: MQTTProtocolError) {
        self.name = name
        self.packet = packet
        self.error = error
    }

    var testDescription: String { self.name }
}

@Suite("MQTTPacketEncoder refuses what the decoder would reject")
struct MQTTPacketEncoderTests {
    static let cases: [UnencodableCase] = [
        .init("PUBACK packet id 0", .pubAck(packetID: 0), .invalidPacketID),
        .init("UNSUBACK packet id 0", .unsubAck(packetID: 0), .invalidPacketID),
        .init("QoS 1 PUBLISH without packet id", .publish(.init(topic: "t", payload: ByteBuffer(), qos: .atLeastOnce)), .invalidPacketID),
        .init("QoS 2 PUBLISH packet id 0", .publish(.init(topic: "t", payload: ByteBuffer(), qos: .exactlyOnce, packetID: 0)), .invalidPacketID),
        .init("QoS 0 PUBLISH with packet id", .publish(.init(topic: "t", payload: ByteBuffer(), packetID: 1)), .invalidPacketID),
        .init("QoS 0 PUBLISH with DUP", .publish(.init(topic: "t", payload: ByteBuffer(), dup: true)), .dupFlagWithQoS0),
        .init("PUBLISH to a wildcard topic", .publish(.init(topic: "a/+", payload: ByteBuffer())), .invalidTopicName),
        .init("PUBLISH to an empty topic", .publish(.init(topic: "", payload: ByteBuffer())), .invalidTopicName),
        .init("topic with U+0000", .publish(.init(topic: "a\u{0}b", payload: ByteBuffer())), .stringContainsNull),
        .init("topic over 65,535 bytes", .publish(.init(topic: String(repeating: "a", count: 65536), payload: ByteBuffer())), .fieldTooLong),
        .init("password without user name", .connect(.init(clientID: "c", password: ByteBuffer(string: "p"))), .passwordWithoutUsername),
        .init(
            "password over 65,535 bytes",
            .connect(.init(clientID: "c", username: "u", password: ByteBuffer(repeating: 0, count: 65536))),
            .fieldTooLong
        ),
        .init("will to a wildcard topic", .connect(.init(clientID: "c", will: .init(topic: "#", message: ByteBuffer()))), .invalidTopicName),
        .init("session present with a refusal", .connAck(.init(sessionPresent: true, returnCode: .notAuthorized)), .invalidConnAckFlags),
        .init("SUBSCRIBE without filters", .subscribe(.init(packetID: 1, subscriptions: [])), .emptySubscribe),
        .init("SUBSCRIBE packet id 0", .subscribe(.init(packetID: 0, subscriptions: [.init(topicFilter: "a", qos: .atMostOnce)])), .invalidPacketID),
        .init(
            "SUBSCRIBE bad filter",
            .subscribe(.init(packetID: 1, subscriptions: [.init(topicFilter: "a/#/b", qos: .atMostOnce)])),
            .invalidTopicFilter
        ),
        .init("SUBACK without codes", .subAck(.init(packetID: 1, returnCodes: [])), .emptySubAck),
        .init("UNSUBSCRIBE without filters", .unsubscribe(.init(packetID: 1, topicFilters: [])), .emptyUnsubscribe),
        .init("UNSUBSCRIBE empty filter", .unsubscribe(.init(packetID: 1, topicFilters: [""])), .invalidTopicFilter),
    ]

    @Test("an unencodable packet is refused and leaves the buffer untouched", arguments: Self.cases)
    func refusesUnencodable(_ input: UnencodableCase) {
        var out = ByteBuffer(bytes: [0xAA])
        #expect(throws: input.error) { try MQTTPacketEncoder().write(input.packet, into: &out) }
        #expect(Array(out.readableBytesView) == [0xAA])
    }

    @Test("a PUBLISH is appended after what the buffer already holds")
    func appendsToBuffer() throws {
        var out = ByteBuffer(bytes: [0xAA])
        try MQTTPacketEncoder().write(.pingResp, into: &out)
        try MQTTPacketEncoder().write(.publish(.init(topic: "t", payload: ByteBuffer(bytes: [1]))), into: &out)
        #expect(Array(out.readableBytesView) == [0xAA, 0xD0, 0x00, 0x30, 0x04, 0x00, 0x01, 0x74, 0x01])
    }
}
