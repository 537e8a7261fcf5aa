import Foundation
import HeraldStore
import NIOCore

/// A message for one device's MQTT connection.
public struct GatewayMessage: Sendable {
    /// The id the device deduplicates by (the push's `msg_id`).
    public var msgID: String
    /// The PUBLISH payload.
    public var payload: ByteBuffer
    /// How long the message may wait for the device; zero means online devices only,
    /// sent without being stored.
    public var timeToLive: Duration

    public init(msgID: String, payload: ByteBuffer, timeToLive: Duration) {
        self.msgID = msgID
        self.payload = payload
        self.timeToLive = timeToLive
    }
}

/// What became of a delivery over the MQTT connection.
public enum DeliveryOutcome: Sendable, Hashable {
    /// The device acknowledged it (PUBACK).
    case acknowledged
    /// The device has no connection here; a stored message waits for it.
    case notConnected
    /// Sent, but not acknowledged within the timeout; a stored message is replayed on reconnect.
    case noAcknowledgement
}

/// A message queued on one connection. Equatable for the tests of the actions that carry it.
struct Outgoing: Sendable, Equatable {
    /// Position in the device's inbox; nil for a message that is not stored (TTL 0).
    var seq: Int64?
    var msgID: String
    var payload: ByteBuffer
    /// Sent before on an earlier connection (MQTT DUP).
    var dup: Bool
    /// Identifies who waits for the outcome of a message that has no seq.
    var token: UInt64
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

/// One message for one device, as the message center hands it to the gateway.
public struct GatewayDelivery: Sendable {
    public var message: GatewayMessage
    public var device: DeviceIdentity
    /// The message's position in the device's inbox, if the caller stored it there; a
    /// message without one is sent only if the device is connected, and never replayed.
    public var seq: Int64?

    public init(message: GatewayMessage, device: DeviceIdentity, seq: Int64?) {
        self.message = message
        self.device = device
        self.seq = seq
    }
}
