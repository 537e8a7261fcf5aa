/// An MQTT quality-of-service level.
public enum MQTTQoS: UInt8, Sendable, Hashable, CaseIterable, Comparable {
    /// Fire and forget: delivered at most once, never acknowledged.
    case atMostOnce = 0
    /// Acknowledged with PUBACK; may be delivered more than once.
    case atLeastOnce = 1
    /// The four-packet PUBREC/PUBREL/PUBCOMP exchange.
    case exactlyOnce = 2

    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// Decodes a two-bit QoS field, rejecting the reserved value 3.
    init(validating rawValue: UInt8) throws(MQTTProtocolError) {
        guard let qos = MQTTQoS(rawValue: rawValue) else {
            throw .invalidQoS
        }
        self = qos
    }
}
