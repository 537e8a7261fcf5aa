import Foundation

/// A notification the sandbox accepted, as it arrived.
public struct RecordedNotification: Sendable, Hashable {
    /// The `apns-id` the sandbox answered with.
    public var apnsID: UUID
    /// The device token from the path, lowercase hex.
    public var deviceToken: String
    /// `apns-topic`.
    public var topic: String?
    /// `apns-push-type`.
    public var pushType: String
    /// `apns-priority` (10 when absent).
    public var priority: Int
    /// `apns-expiration` in epoch seconds, if sent.
    public var expiration: Int?
    /// `apns-collapse-id`, if sent.
    public var collapseID: String?
    /// Every request header but the pseudo-headers and `authorization`.
    public var headers: [String: String]
    /// The JWT the request carried (token auth), for checks on token sharing.
    public var providerToken: String?
    /// The raw JSON body.
    public var payload: [UInt8]
    /// The sandbox connection the request came on.
    public var connectionID: Int
    /// The sandbox clock's time of arrival.
    public var receivedAt: Date

    /// The payload decoded as a JSON object, or nil if it is not one.
    public var payloadJSON: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any]
    }
}

/// A notification as the device shows it: its identifier is the collapse id, or the
/// `apns-id` when there was none.
public struct ShownNotification: Sendable, Hashable {
    /// The identifier a later notification replaces it by, or the app removes it by.
    public var identifier: String
    /// The notification currently shown under that identifier.
    public var notification: RecordedNotification
}

/// What a device holds: the notifications it shows, and the background pushes its app got.
public struct DeviceNotificationCentre: Sendable, Hashable {
    /// Shown notifications in the order they were first shown; a replacement keeps its place.
    public var shown: [ShownNotification] = []
    /// Background pushes, every one as received.
    public var background: [RecordedNotification] = []

    /// The shown notification with this identifier.
    public func notification(withIdentifier identifier: String) -> RecordedNotification? {
        shown.first { $0.identifier == identifier }?.notification
    }
}
