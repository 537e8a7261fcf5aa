import Foundation

/// What a delivery event says happened (the `type` of a row of the event log, of the event
/// stream and of a webhook's events).
public enum DeliveryEventType: String, Sendable, Hashable, CaseIterable, Codable {
    /// The push was accepted (message-level: no device).
    case accepted
    /// The copy is in the device's inbox, under its inbox seq.
    case stored
    /// The copy went out over the device's MQTT connection.
    case sentTCP = "sent_tcp"
    /// The device acknowledged the copy over its MQTT connection.
    case acknowledged
    /// APNs accepted the notification (with its apns-id and status).
    case sentAPNs = "sent_apns"
    /// FCM accepted the copy (an Android device not connected).
    case sentFCM = "sent_fcm"
    /// APNs or FCM refused the copy for good (with its reason and `channel`).
    case failed
    /// The copy's time to live ran out before any channel took it.
    case expired
    /// APNs or FCM said one of the device's tokens is no longer valid (`token`: apns, voip, fcm).
    case tokenInvalidated = "token_invalidated"
    /// The device reported the user opened the notification.
    case opened
    /// The push was recalled (message-level).
    case recalled
    /// The device's Notification Service Extension ran: the device got the APNs copy (a
    /// receipt of the SDK's).
    case delivered
    /// The notification was shown (a receipt).
    case displayed
    /// The user dismissed it (a receipt; a category with customDismissAction).
    case dismissed
    /// The user tapped one of its category's actions (a receipt, with the action).
    case action
    /// The device's SDK could not use the copy, or part of it (a receipt, with the reason:
    /// a payload it could not read, a category that doesn't parse).
    case dropped

    /// The types named in a comma-separated list (`types=a,b`, no spaces); nil when one isn't a type.
    public static func list(_ text: String) -> [DeliveryEventType]? {
        var types: [DeliveryEventType] = []
        for name in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let type = DeliveryEventType(rawValue: String(name)) else { return nil }
            if !types.contains(type) { types.append(type) }
        }
        return types
    }
}
