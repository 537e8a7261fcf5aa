import Foundation

/// A message waiting in a device's inbox for the long connection.
public struct InboxMessage: Sendable, Hashable {
    /// Position in the device's sequence.
    public var seq: Int64
    /// The message id the device deduplicates by.
    public var messageID: String
    /// What is sent to the device (the PUBLISH payload).
    public var payload: [UInt8]
    public var expiresAt: Date
    /// Whether a connection sent it before (its seq is at or below the device's recorded
    /// "sent through"): sent again, it carries MQTT DUP.
    public var wasSent: Bool

    public init(seq: Int64, messageID: String, payload: [UInt8], expiresAt: Date, wasSent: Bool = false) {
        self.seq = seq
        self.messageID = messageID
        self.payload = payload
        self.expiresAt = expiresAt
        self.wasSent = wasSent
    }
}

/// A device as the gateway knows it once it has authenticated.
public struct GatewayDevice: Sendable, Hashable {
    public var deviceID: Int64
    public var appID: Int64
    public var registrationID: String

    public init(deviceID: Int64, appID: Int64, registrationID: String) {
        self.deviceID = deviceID
        self.appID = appID
        self.registrationID = registrationID
    }
}

/// Why a device's CONNECT was refused. The gateway answers every case alike (MQTT "bad
/// user name or password"), so a stranger can't tell which registration ids exist.
public enum GatewayAuthFailure: Error, Sendable, Hashable {
    /// No such device.
    case unknownDevice
    /// Wrong secret.
    case badCredentials
    /// The device belongs to another app.
    case notAuthorised
}

/// One message for the inboxes of many devices (see ``HeraldStore/enqueue(_:)``).
public struct InboxBroadcast: Sendable, Hashable {
    public var deviceIDs: [Int64]
    public var messageID: String
    public var payload: [UInt8]
    public var expiresAt: Date

    public init(deviceIDs: [Int64], messageID: String, payload: [UInt8], expiresAt: Date) {
        self.deviceIDs = deviceIDs
        self.messageID = messageID
        self.payload = payload
        self.expiresAt = expiresAt
    }
}
