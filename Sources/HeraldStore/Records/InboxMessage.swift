import Foundation

/// A message waiting in a device's inbox for the MQTT connection.
public struct InboxMessage: Sendable, Hashable {
    /// Position in the device's sequence.
    public var seq: Int64
    /// The message id the device deduplicates by.
    public var msgID: String
    /// What is sent to the device (the PUBLISH payload).
    public var payload: [UInt8]
    public var expiresAt: Date
    /// Whether a connection sent it before (its seq is at or below the device's recorded
    /// "sent through"): sent again, it carries MQTT DUP.
    public var wasSent: Bool

    public init(seq: Int64, msgID: String, payload: [UInt8], expiresAt: Date, wasSent: Bool = false) {
        self.seq = seq
        self.msgID = msgID
        self.payload = payload
        self.expiresAt = expiresAt
        self.wasSent = wasSent
    }
}

/// One message for the inboxes of many devices (see ``GatewayStore/enqueue(_:)``).
public struct InboxBroadcast: Sendable, Hashable {
    public var deviceIDs: [Int64]
    public var msgID: String
    public var payload: [UInt8]
    public var expiresAt: Date

    public init(deviceIDs: [Int64], msgID: String, payload: [UInt8], expiresAt: Date) {
        self.deviceIDs = deviceIDs
        self.msgID = msgID
        self.payload = payload
        self.expiresAt = expiresAt
    }
}
