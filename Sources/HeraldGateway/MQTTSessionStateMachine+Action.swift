import HeraldMQTT
import NIOCore

extension MQTTSessionStateMachine {
    /// Why a connection closed, as logged and counted (label-safe values).
    enum CloseReason: String, Sendable, Hashable {
        case clientDisconnected = "client_disconnect"
        case protocolViolation = "protocol_violation"
        case authenticationFailed = "auth_failed"
        case keepaliveExpired = "keepalive_timeout"
        case connectTimeout = "connect_timeout"
        case takenOver = "takeover"
        case slowConsumer = "slow_consumer"
        case serverShutdown = "shutdown"
        case unsupportedQoS = "unsupported_qos"
        case storeUnavailable = "store_unavailable"
    }

    /// What the handler is to do. Equatable, so that tests compare whole actions.
    enum Action: Equatable {
        case none
        case authenticate(clientID: String, username: String, password: String, keepAlive: UInt16)
        /// CONNACK accepted, then register the session and load the inbox.
        case acceptSession(registrationID: String)
        /// Send these, then load the inbox's messages after `after` (the next page, or a
        /// live message skipped a seq).
        case loadInbox(after: Int64, sendFirst: [MQTTPacket])
        /// A live copy of a message this connection already had acknowledged (an inbox load
        /// brought it first): nothing to send, its sender learns it was acknowledged.
        case alreadyAcknowledged(Outgoing)
        case send([MQTTPacket])
        case sendAndClose(MQTTPacket, CloseReason)
        case close(CloseReason)
        /// A message was acknowledged; `ackedThrough` is the new inbox position, if it moved.
        /// Send `then`, and load the inbox's messages after `loadAfter` if there is one.
        case acknowledged(Outgoing, ackedThrough: Int64?, then: [MQTTPacket], loadAfter: Int64?)
        /// A device event on its events topic; `reply` acknowledges a QoS 1 publish.
        case deviceEvent(ByteBuffer, reply: MQTTPacket?)
    }
}
