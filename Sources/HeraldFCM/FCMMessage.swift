import Foundation
import HeraldCore

/// A copy as FCM's HTTP v1 `messages:send` takes it: `{"message": {"token": …,
/// "notification": …, "android": …, "data": …}}`, rendered from the push's JPush fields.
///
/// - `notification.android` (else `notification.alert`): the notification's title and body;
///   `channel_id`, `sound`, `priority` (JPush's -2…2 as FCM's `notification_priority`) and
///   `big_pic_path` (an https URL, as `image`) in `android.notification`; its `extras`,
///   and Herald's `msg_id`, in `data`, every value a string as FCM requires.
/// - `message` (in-app): `data` only, the SDK's fields (`msg_content`, `title`,
///   `content_type`, `extras` as JSON, `msg_id`), normal priority.
/// - The identifier (`identifier`) as the collapse key and the notification's tag (a later
///   copy replaces the earlier one on the device); the time to live as `ttl`.
public struct FCMMessage: Sendable, Hashable {
    public var token: String
    /// The JSON body.
    public var body: [UInt8]

    public init(token: String, body: [UInt8]) {
        self.token = token
        self.body = body
    }

    /// Keys FCM refuses in `data`.
    static func isReservedDataKey(_ key: String) -> Bool {
        key == "from" || key == "notification" || key == "message_type" || key.hasPrefix("google") || key.hasPrefix("gcm")
    }

    public init(push: Push, msgID: String, token: String, expiresAt: Date, now: Date = Date()) {
        var data: [String: String] = ["msg_id": msgID]
        let shown = push.notification.flatMap { $0.alert != nil || $0.android != nil ? $0 : nil }
        let android = shown?.android
        if let android {
            for (key, value) in android.fields["extras"]?.object ?? [:] where !Self.isReservedDataKey(key) {
                data[key] = value.string ?? String(decoding: value.bytes, as: UTF8.self)
            }
        } else if shown == nil, let message = push.message {
            data["msg_content"] = message.msgContent
            if let title = message.title { data["title"] = title }
            if let contentType = message.contentType { data["content_type"] = contentType }
            if let extras = message.extras { data["extras"] = String(decoding: JSONValue.object(extras).bytes, as: UTF8.self) }
        }
        let picture = android?.fields["big_pic_path"]?.string.flatMap { $0.hasPrefix("https://") ? $0 : nil }
        var priority: String?
        if case .int(let value)? = android?.fields["priority"] { priority = Self.notificationPriority(Int(clamping: value)) }
        let ttl = push.timeToLive == 0 ? 0 : max(0, Int(expiresAt.timeIntervalSince(now).rounded(.down)))
        var body = JSONObjectWriter(capacity: 600)
        body.object("message") { message in
            message.field("token", token)
            if let shown {
                message.object("notification") { notification in
                    notification.field("title", android?.fields["title"]?.string)
                    notification.field("body", android?.alert ?? shown.alert)
                    notification.field("image", picture)
                }
            }
            message.object("android") { part in
                part.field("collapse_key", push.identifier)
                part.field("priority", shown == nil ? "NORMAL" : "HIGH")
                part.field("ttl", "\(ttl)s")
                if shown != nil {
                    part.object("notification") { notification in
                        notification.field("channel_id", android?.fields["channel_id"]?.string)
                        notification.field("sound", android?.fields["sound"]?.string)
                        notification.field("tag", push.identifier)
                        notification.field("notification_priority", priority)
                    }
                }
            }
            message.field("data", data.mapValues { JSONValue.string($0) })
        }
        self.init(token: token, body: body.finish())
    }

    /// A recall command the SDK executes: a data message (`herald_type: recall`, the
    /// command's `msg_id`, `identifiers` as a JSON array), normal priority, no notification,
    /// valid until the recall window ends.
    public static func recall(token: String, commandID: String, identifiers: [String], expiresAt: Date, now: Date = Date()) -> FCMMessage {
        let ttl = max(0, Int(expiresAt.timeIntervalSince(now).rounded(.down)))
        var body = JSONObjectWriter(capacity: 300)
        body.object("message") { message in
            message.field("token", token)
            message.object("android") { android in
                android.field("priority", "NORMAL")
                android.field("ttl", "\(ttl)s")
            }
            message.field(
                "data",
                [
                    "herald_type": JSONValue.string("recall"), "msg_id": .string(commandID),
                    "identifiers": .string(String(decoding: JSONValue.array(identifiers.map(JSONValue.string)).bytes, as: UTF8.self)),
                ]
            )
        }
        return FCMMessage(token: token, body: body.finish())
    }

    /// JPush's Android priority (-2…2) as FCM's `notification_priority`.
    static func notificationPriority(_ priority: Int) -> String {
        switch priority {
        case ...(-2): "PRIORITY_MIN"
        case -1: "PRIORITY_LOW"
        case 0: "PRIORITY_DEFAULT"
        case 1: "PRIORITY_HIGH"
        default: "PRIORITY_MAX"
        }
    }
}
