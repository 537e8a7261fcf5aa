import HeraldMQTT
import NIOCore
import Testing

/// One malformed input and the error it must produce.
struct MalformedCase: Sendable, CustomTestStringConvertible {
    var name: String
    var bytes: [UInt8]
    var error: MQTTProtocolError

    init(_ name: String, _ bytes: [UInt8], _ error: MQTTProtocolError) {
        self.name = name
        self.bytes = bytes
        self.error = error
    }

    var testDescription: String { self.name }
}

@Suite("Malformed input gives the specific protocol error")
struct MQTTMalformedPacketTests {
    static let fixedHeaderCases: [MalformedCase] = [
        .init("packet type 0 is reserved", [0x00, 0x00], .reservedPacketType),
        .init("packet type 15 is reserved", [0xF0, 0x00], .reservedPacketType),
        .init("SUBSCRIBE needs flags 0010", [0x80, 0x00], .invalidFixedHeaderFlags),
        .init("SUBSCRIBE with flags 0011", [0x83, 0x00], .invalidFixedHeaderFlags),
        .init("UNSUBSCRIBE needs flags 0010", [0xA0, 0x00], .invalidFixedHeaderFlags),
        .init("PUBREL needs flags 0010", [0x60, 0x02, 0x00, 0x01], .invalidFixedHeaderFlags),
        .init("PUBACK needs flags 0000", [0x42, 0x02, 0x00, 0x01], .invalidFixedHeaderFlags),
        .init("CONNECT needs flags 0000", [0x11, 0x00], .invalidFixedHeaderFlags),
        .init("PINGREQ needs flags 0000", [0xC8, 0x00], .invalidFixedHeaderFlags),
        .init("DISCONNECT needs flags 0000", [0xE1, 0x00], .invalidFixedHeaderFlags),
        .init("PUBLISH QoS 3", [0x36, 0x03, 0x00, 0x01, 0x61], .invalidQoS),
        .init("PUBLISH QoS 0 with DUP", [0x38, 0x03, 0x00, 0x01, 0x61], .dupFlagWithQoS0),
        .init("remaining length over four bytes", [0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], .malformedRemainingLength),
    ]

    static let fieldCases: [MalformedCase] = [
        .init("string length runs past the packet", packet(0x30, [0x00, 0x0A, 0x61]), .truncatedPacket),
        .init("string length field cut short", packet(0x30, [0x00]), .truncatedPacket),
        .init("packet id cut short", packet(0x40, [0x01]), .truncatedPacket),
        .init("PUBLISH QoS 1 without packet id", packet(0x32, field("a")), .truncatedPacket),
        .init(
            "binary password runs past the packet",
            packet(0x10, connectBody(flags: 0xC2, rest: field("u") + [0x00, 0x05, 0x01])),
            .truncatedPacket
        ),
        .init("invalid UTF-8 sequence", packet(0x30, field([0xC3, 0x28])), .invalidUTF8String),
        .init("overlong UTF-8 encoding of NUL", packet(0x30, field([0xC0, 0x80])), .invalidUTF8String),
        .init("UTF-8 encoded surrogate", packet(0x30, field([0xED, 0xA0, 0x80])), .invalidUTF8String),
        .init("UTF-8 sequence cut off", packet(0x30, field([0x61, 0xE2, 0x82])), .invalidUTF8String),
        .init("string containing U+0000", packet(0x30, field([0x61, 0x00, 0x62])), .stringContainsNull),
        .init("client id containing U+0000", packet(0x10, field("MQTT") + [4, 2, 0, 60] + field([0x00])), .stringContainsNull),
        .init("PUBACK packet id 0", packet(0x40, [0x00, 0x00]), .invalidPacketID),
        .init("PUBREC packet id 0", packet(0x50, [0x00, 0x00]), .invalidPacketID),
        .init("PUBREL packet id 0", packet(0x62, [0x00, 0x00]), .invalidPacketID),
        .init("PUBCOMP packet id 0", packet(0x70, [0x00, 0x00]), .invalidPacketID),
        .init("UNSUBACK packet id 0", packet(0xB0, [0x00, 0x00]), .invalidPacketID),
        .init("PUBLISH QoS 1 packet id 0", packet(0x32, field("a") + [0x00, 0x00]), .invalidPacketID),
        .init("SUBSCRIBE packet id 0", packet(0x82, [0x00, 0x00] + field("a") + [0x00]), .invalidPacketID),
        .init("SUBACK packet id 0", packet(0x90, [0x00, 0x00, 0x00]), .invalidPacketID),
        .init("UNSUBSCRIBE packet id 0", packet(0xA2, [0x00, 0x00] + field("a")), .invalidPacketID),
        .init("trailing byte after PUBACK", packet(0x40, [0x00, 0x01, 0x00]), .trailingBytes),
        .init("PINGREQ with a body", packet(0xC0, [0x00]), .trailingBytes),
        .init("PINGRESP with a body", packet(0xD0, [0x00]), .trailingBytes),
        .init("DISCONNECT with a body", packet(0xE0, [0x00]), .trailingBytes),
        .init("CONNACK with a third byte", packet(0x20, [0x00, 0x00, 0x00]), .trailingBytes),
        .init("CONNECT with bytes after the last field", packet(0x10, connectBody(flags: 0x02, rest: [0x00])), .trailingBytes),
        .init("PUBLISH topic with +", packet(0x30, field("a/+")), .invalidTopicName),
        .init("PUBLISH topic with #", packet(0x30, field("a/#")), .invalidTopicName),
        .init("PUBLISH empty topic", packet(0x30, field("")), .invalidTopicName),
        .init("will topic with a wildcard", packet(0x10, connectBody(flags: 0x06, rest: field("w/#") + field("m"))), .invalidTopicName),
        .init("SUBSCRIBE # not last", packet(0x82, [0x00, 0x01] + field("a/#/b") + [0x00]), .invalidTopicFilter),
        .init("SUBSCRIBE # inside a level", packet(0x82, [0x00, 0x01] + field("a#") + [0x00]), .invalidTopicFilter),
        .init("SUBSCRIBE + inside a level", packet(0x82, [0x00, 0x01] + field("a/b+") + [0x00]), .invalidTopicFilter),
        .init("SUBSCRIBE empty filter", packet(0x82, [0x00, 0x01] + field("") + [0x00]), .invalidTopicFilter),
        .init("UNSUBSCRIBE + inside a level", packet(0xA2, [0x00, 0x01] + field("+a")), .invalidTopicFilter),
        .init("SUBSCRIBE requested QoS 3", packet(0x82, [0x00, 0x01] + field("a") + [0x03]), .invalidQoS),
        .init("SUBSCRIBE reserved option bits", packet(0x82, [0x00, 0x01] + field("a") + [0x04]), .invalidSubscriptionOptions),
        .init("SUBSCRIBE option byte missing", packet(0x82, [0x00, 0x01] + field("a")), .truncatedPacket),
        .init("SUBSCRIBE without filters", packet(0x82, [0x00, 0x01]), .emptySubscribe),
        .init("UNSUBSCRIBE without filters", packet(0xA2, [0x00, 0x01]), .emptyUnsubscribe),
        .init("SUBACK without return codes", packet(0x90, [0x00, 0x01]), .emptySubAck),
        .init("SUBACK return code 3", packet(0x90, [0x00, 0x01, 0x03]), .invalidSubAckReturnCode),
        .init("SUBACK return code 0x81", packet(0x90, [0x00, 0x01, 0x00, 0x81]), .invalidSubAckReturnCode),
        .init("CONNACK reserved flag bits", packet(0x20, [0x02, 0x00]), .invalidConnAckFlags),
        .init("CONNACK session present with a refusal", packet(0x20, [0x01, 0x05]), .invalidConnAckFlags),
        .init("CONNACK return code 6", packet(0x20, [0x00, 0x06]), .invalidConnAckReturnCode),
        .init("CONNACK cut short", packet(0x20, [0x00]), .truncatedPacket),
    ]

    static let connectCases: [MalformedCase] = [
        .init("protocol name MQIsdp (3.1)", packet(0x10, connectBody(name: "MQIsdp", level: 3, flags: 0x02)), .unsupportedProtocolName),
        .init("protocol name in lower case", packet(0x10, connectBody(name: "mqtt", flags: 0x02)), .unsupportedProtocolName),
        .init("protocol level 3", packet(0x10, connectBody(level: 3, flags: 0x02)), .unsupportedProtocolLevel),
        .init("protocol level 5", packet(0x10, connectBody(level: 5, flags: 0x02)), .unsupportedProtocolLevel),
        .init("reserved flag set", packet(0x10, connectBody(flags: 0x03)), .connectReservedFlagSet),
        .init("will QoS without will flag", packet(0x10, connectBody(flags: 0x0A)), .inconsistentWillFlags),
        .init("will retain without will flag", packet(0x10, connectBody(flags: 0x22)), .inconsistentWillFlags),
        .init("will QoS 3", packet(0x10, connectBody(flags: 0x1E, rest: field("w") + field("m"))), .invalidQoS),
        .init("password without user name", packet(0x10, connectBody(flags: 0x42, rest: field("p"))), .passwordWithoutUsername),
        .init("user name flag without a user name", packet(0x10, connectBody(flags: 0x82)), .truncatedPacket),
        .init("will flag without a will", packet(0x10, connectBody(flags: 0x06)), .truncatedPacket),
        .init("CONNECT cut after the protocol level", packet(0x10, field("MQTT") + [4]), .truncatedPacket),
    ]

    @Test("a bad fixed header is rejected", arguments: Self.fixedHeaderCases)
    func badFixedHeader(_ input: MalformedCase) {
        #expect(throws: input.error) { try decode(input.bytes) }
    }

    @Test("a bad field is rejected", arguments: Self.fieldCases)
    func badField(_ input: MalformedCase) {
        #expect(throws: input.error) { try decode(input.bytes) }
    }

    @Test("a bad CONNECT is rejected", arguments: Self.connectCases)
    func badConnect(_ input: MalformedCase) {
        #expect(throws: input.error) { try decode(input.bytes) }
    }

    @Test("a bad first byte is rejected before the remaining length arrives")
    func badFirstByteRejectedAlone() {
        #expect(throws: MQTTProtocolError.reservedPacketType) { try decode([0xF0]) }
        #expect(throws: MQTTProtocolError.invalidFixedHeaderFlags) { try decode([0x80]) }
        #expect(throws: MQTTProtocolError.invalidQoS) { try decode([0x36]) }
    }

    @Test("an unsupported protocol is answered with CONNACK 0x01, other errors with no CONNACK")
    func connAckReturnCodeForErrors() {
        #expect(MQTTProtocolError.unsupportedProtocolName.connAckReturnCode == .unacceptableProtocolVersion)
        #expect(MQTTProtocolError.unsupportedProtocolLevel.connAckReturnCode == .unacceptableProtocolVersion)
        #expect(MQTTProtocolError.connectReservedFlagSet.connAckReturnCode == nil)
        #expect(MQTTProtocolError.packetTooLarge.connAckReturnCode == nil)
    }

    @Test("errors have distinct, fixed short descriptions")
    func shortDescriptions() {
        let errors = (Self.fixedHeaderCases + Self.fieldCases + Self.connectCases).map(\.error)
        let distinct = Set(errors)
        #expect(Set(distinct.map(\.shortDescription)).count == distinct.count)
        #expect(MQTTProtocolError.invalidQoS.shortDescription == "Invalid QoS")
        #expect(MQTTProtocolError.invalidQoS.description == "MQTTProtocolError.invalidQoS")
    }
}
