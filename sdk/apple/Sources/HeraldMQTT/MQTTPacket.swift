import NIOCore

/// An MQTT 3.1.1 control packet, in either direction.
///
/// The server decodes what clients send (CONNECT, PUBLISH, PUBACK, SUBSCRIBE, ...) and the
/// client decodes what servers send (CONNACK, PUBLISH, SUBACK, ...); every type can be
/// decoded with ``MQTTPacketDecoder`` and encoded with ``MQTTPacketEncoder``.
/// Packet identifiers are never 0: the decoder rejects 0 and the encoder refuses it.
public enum MQTTPacket: Sendable, Hashable {
    /// Client to server: open a session.
    case connect(Connect)
    /// Server to client: the answer to CONNECT.
    case connAck(ConnAck)
    /// Either direction: an application message.
    case publish(Publish)
    /// Acknowledges a QoS 1 PUBLISH.
    case pubAck(packetID: UInt16)
    /// First answer to a QoS 2 PUBLISH.
    case pubRec(packetID: UInt16)
    /// Second step of the QoS 2 exchange.
    case pubRel(packetID: UInt16)
    /// Last step of the QoS 2 exchange.
    case pubComp(packetID: UInt16)
    /// Client to server: subscribe to topic filters.
    case subscribe(Subscribe)
    /// Server to client: the answer to SUBSCRIBE.
    case subAck(SubAck)
    /// Client to server: drop subscriptions.
    case unsubscribe(Unsubscribe)
    /// Server to client: the answer to UNSUBSCRIBE.
    case unsubAck(packetID: UInt16)
    /// Client to server: keep-alive probe.
    case pingReq
    /// Server to client: the answer to PINGREQ.
    case pingResp
    /// Client to server: clean close.
    case disconnect

    /// The control packet type, e.g. for logging or a metric label.
    public var type: MQTTPacketType {
        switch self {
        case .connect: .connect
        case .connAck: .connAck
        case .publish: .publish
        case .pubAck: .pubAck
        case .pubRec: .pubRec
        case .pubRel: .pubRel
        case .pubComp: .pubComp
        case .subscribe: .subscribe
        case .subAck: .subAck
        case .unsubscribe: .unsubscribe
        case .unsubAck: .unsubAck
        case .pingReq: .pingReq
        case .pingResp: .pingResp
        case .disconnect: .disconnect
        }
    }
}

extension MQTTPacket {
    /// Decodes the body of one packet whose fixed header has been checked already.
    /// `body` holds exactly the remaining-length bytes; all of them must be consumed.
    static func decode(
        type: MQTTPacketType,
        flags: UInt8,
        body: inout ByteBuffer
    ) throws(MQTTProtocolError) -> MQTTPacket {
        let packet: MQTTPacket
        switch type {
        case .connect:
            packet = .connect(try Connect(decoding: &body))
        case .connAck:
            packet = .connAck(try ConnAck(decoding: &body))
        case .publish:
            packet = .publish(try Publish(decoding: &body, flags: flags))
        case .pubAck:
            packet = .pubAck(packetID: try body.readMQTTPacketID())
        case .pubRec:
            packet = .pubRec(packetID: try body.readMQTTPacketID())
        case .pubRel:
            packet = .pubRel(packetID: try body.readMQTTPacketID())
        case .pubComp:
            packet = .pubComp(packetID: try body.readMQTTPacketID())
        case .subscribe:
            packet = .subscribe(try Subscribe(decoding: &body))
        case .subAck:
            packet = .subAck(try SubAck(decoding: &body))
        case .unsubscribe:
            packet = .unsubscribe(try Unsubscribe(decoding: &body))
        case .unsubAck:
            packet = .unsubAck(packetID: try body.readMQTTPacketID())
        case .pingReq:
            packet = .pingReq
        case .pingResp:
            packet = .pingResp
        case .disconnect:
            packet = .disconnect
        }
        guard body.readableBytes == 0 else {
            throw .trailingBytes
        }
        return packet
    }
}
