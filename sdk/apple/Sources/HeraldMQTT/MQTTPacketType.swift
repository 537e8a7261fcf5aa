/// The control packet type carried in the high four bits of an MQTT fixed header.
public enum MQTTPacketType: UInt8, Sendable, Hashable, CaseIterable {
    /// CONNECT, client to server.
    case connect = 1
    /// CONNACK, server to client.
    case connAck = 2
    /// PUBLISH, either direction.
    case publish = 3
    /// PUBACK, either direction.
    case pubAck = 4
    /// PUBREC, either direction.
    case pubRec = 5
    /// PUBREL, either direction.
    case pubRel = 6
    /// PUBCOMP, either direction.
    case pubComp = 7
    /// SUBSCRIBE, client to server.
    case subscribe = 8
    /// SUBACK, server to client.
    case subAck = 9
    /// UNSUBSCRIBE, client to server.
    case unsubscribe = 10
    /// UNSUBACK, server to client.
    case unsubAck = 11
    /// PINGREQ, client to server.
    case pingReq = 12
    /// PINGRESP, server to client.
    case pingResp = 13
    /// DISCONNECT, client to server.
    case disconnect = 14

    /// The fixed-header flags every packet of this type must carry. PUBLISH has none
    /// fixed: its flags are DUP, QoS and RETAIN.
    var requiredFlags: UInt8? {
        switch self {
        case .publish: nil
        case .pubRel, .subscribe, .unsubscribe: 0b0010
        default: 0
        }
    }
}
