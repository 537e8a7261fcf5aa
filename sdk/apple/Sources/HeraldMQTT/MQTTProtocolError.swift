/// An error in MQTT 3.1.1 framing or packet contents, found while decoding bytes from a
/// peer or while encoding a packet that could not be represented on the wire.
///
/// A server that sees one of these while decoding closes the network connection, as the
/// specification requires for malformed packets. The exception is a CONNECT with an
/// unsupported protocol name or level: ``connAckReturnCode`` tells the server to answer
/// CONNACK 0x01 first.
///
/// The cases are static members over a private code, so new cases can be added without
/// breaking callers that switch over a closed set.
public struct MQTTProtocolError: Error, Hashable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case reservedPacketType
        case invalidFixedHeaderFlags
        case malformedRemainingLength
        case packetTooLarge
        case truncatedPacket
        case trailingBytes
        case invalidUTF8String
        case stringContainsNull
        case fieldTooLong
        case invalidQoS
        case invalidPacketID
        case dupFlagWithQoS0
        case invalidTopicName
        case invalidTopicFilter
        case unsupportedProtocolName
        case unsupportedProtocolLevel
        case connectReservedFlagSet
        case inconsistentWillFlags
        case passwordWithoutUsername
        case invalidConnAckFlags
        case invalidConnAckReturnCode
        case emptySubscribe
        case invalidSubscriptionOptions
        case emptySubAck
        case invalidSubAckReturnCode
        case emptyUnsubscribe
    }

    private var code: Code

    private init(_ code: Code) {
        self.code = code
    }

    /// Packet type 0 or 15, both reserved.
    public static let reservedPacketType = Self(.reservedPacketType)
    /// The low four bits of the fixed header are not the ones the packet type requires.
    public static let invalidFixedHeaderFlags = Self(.invalidFixedHeaderFlags)
    /// The remaining length does not end within four bytes.
    public static let malformedRemainingLength = Self(.malformedRemainingLength)
    /// The packet is larger than the decoder's maximum, or larger than MQTT can encode.
    public static let packetTooLarge = Self(.packetTooLarge)
    /// A field runs past the end of the packet.
    public static let truncatedPacket = Self(.truncatedPacket)
    /// Bytes are left in the packet after its last field.
    public static let trailingBytes = Self(.trailingBytes)
    /// A string field is not well-formed UTF-8.
    public static let invalidUTF8String = Self(.invalidUTF8String)
    /// A string field contains U+0000.
    public static let stringContainsNull = Self(.stringContainsNull)
    /// A string or binary field is longer than 65,535 bytes (encoding only).
    public static let fieldTooLong = Self(.fieldTooLong)
    /// A QoS value of 3.
    public static let invalidQoS = Self(.invalidQoS)
    /// A packet identifier is 0, missing where the packet needs one, or present where it must not be.
    public static let invalidPacketID = Self(.invalidPacketID)
    /// A QoS 0 PUBLISH has the DUP flag set.
    public static let dupFlagWithQoS0 = Self(.dupFlagWithQoS0)
    /// A topic name is empty or contains a wildcard (`+` or `#`).
    public static let invalidTopicName = Self(.invalidTopicName)
    /// A topic filter is empty or places a wildcard anywhere but a whole level (`#` only last).
    public static let invalidTopicFilter = Self(.invalidTopicFilter)
    /// CONNECT names a protocol other than "MQTT".
    public static let unsupportedProtocolName = Self(.unsupportedProtocolName)
    /// CONNECT asks for a protocol level other than 4 (MQTT 3.1.1).
    public static let unsupportedProtocolLevel = Self(.unsupportedProtocolLevel)
    /// CONNECT has its reserved flag (bit 0) set.
    public static let connectReservedFlagSet = Self(.connectReservedFlagSet)
    /// CONNECT sets will QoS or will retain without the will flag.
    public static let inconsistentWillFlags = Self(.inconsistentWillFlags)
    /// CONNECT sets the password flag without the user name flag.
    public static let passwordWithoutUsername = Self(.passwordWithoutUsername)
    /// CONNACK has reserved acknowledge flags set, or session present with a refusal.
    public static let invalidConnAckFlags = Self(.invalidConnAckFlags)
    /// CONNACK carries a return code above 5.
    public static let invalidConnAckReturnCode = Self(.invalidConnAckReturnCode)
    /// SUBSCRIBE has no topic filters.
    public static let emptySubscribe = Self(.emptySubscribe)
    /// A SUBSCRIBE requested-QoS byte has reserved bits set.
    public static let invalidSubscriptionOptions = Self(.invalidSubscriptionOptions)
    /// SUBACK has no return codes.
    public static let emptySubAck = Self(.emptySubAck)
    /// SUBACK carries a return code other than 0, 1, 2 or 0x80.
    public static let invalidSubAckReturnCode = Self(.invalidSubAckReturnCode)
    /// UNSUBSCRIBE has no topic filters.
    public static let emptyUnsubscribe = Self(.emptyUnsubscribe)

    /// The CONNACK return code a server should send before closing the connection, or `nil`
    /// when the specification says to close without a CONNACK.
    public var connAckReturnCode: MQTTPacket.ConnAck.ReturnCode? {
        switch self.code {
        case .unsupportedProtocolName, .unsupportedProtocolLevel:
            return .unacceptableProtocolVersion
        default:
            return nil
        }
    }

    public var description: String {
        "MQTTProtocolError.\(String(describing: self.code))"
    }

    /// A short, fixed description, safe to use as a metric label or in a log line.
    public var shortDescription: String {
        switch self.code {
        case .reservedPacketType: "Reserved packet type"
        case .invalidFixedHeaderFlags: "Invalid fixed header flags"
        case .malformedRemainingLength: "Malformed remaining length"
        case .packetTooLarge: "Packet too large"
        case .truncatedPacket: "Truncated packet"
        case .trailingBytes: "Trailing bytes"
        case .invalidUTF8String: "Invalid UTF-8 string"
        case .stringContainsNull: "String contains U+0000"
        case .fieldTooLong: "Field too long"
        case .invalidQoS: "Invalid QoS"
        case .invalidPacketID: "Invalid packet identifier"
        case .dupFlagWithQoS0: "DUP flag set on QoS 0"
        case .invalidTopicName: "Invalid topic name"
        case .invalidTopicFilter: "Invalid topic filter"
        case .unsupportedProtocolName: "Unsupported protocol name"
        case .unsupportedProtocolLevel: "Unsupported protocol level"
        case .connectReservedFlagSet: "CONNECT reserved flag set"
        case .inconsistentWillFlags: "Inconsistent will flags"
        case .passwordWithoutUsername: "Password without user name"
        case .invalidConnAckFlags: "Invalid CONNACK flags"
        case .invalidConnAckReturnCode: "Invalid CONNACK return code"
        case .emptySubscribe: "Empty SUBSCRIBE"
        case .invalidSubscriptionOptions: "Invalid subscription options"
        case .emptySubAck: "Empty SUBACK"
        case .invalidSubAckReturnCode: "Invalid SUBACK return code"
        case .emptyUnsubscribe: "Empty UNSUBSCRIBE"
        }
    }
}
