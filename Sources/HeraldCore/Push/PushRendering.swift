import Foundation

/// Renders what goes down each channel: the JSON a device gets over the long connection
/// (docs/protocol.md) and the APNs payload. Pure functions of the push.
public enum PushRendering {
    /// The long-connection payload of a push: a notification (or a replace command), an
    /// in-app message, or both in one object.
    public static func devicePayload(_ push: Push, messageID: String) -> [UInt8] {
        var body: [String: Any] = ["msg_id": messageID, "identifier": push.identifier(messageID: messageID)]
        if let notification = push.notification {
            body["type"] = push.replace != nil ? "replace" : "notification"
            body["notification"] = deviceNotification(notification)
        } else {
            body["type"] = "message"
        }
        if let message = push.message {
            var fields: [String: Any] = ["msg_content": message.msgContent]
            fields["title"] = message.title
            fields["content_type"] = message.contentType
            if let extras = message.extras { fields["extras"] = extras }
            body["message"] = fields
        }
        return json(body)
    }

    /// A recall command over the long connection.
    public static func deviceRecall(commandID: String, identifiers: [String]) -> [UInt8] {
        json(["type": "recall", "msg_id": commandID, "identifiers": identifiers])
    }

    /// The APNs payload (`aps` plus extras plus Herald's own fields). `badge` is the
    /// device's resulting badge when the push sets or changes it.
    public static func apnsPayload(_ push: Push, messageID: String, badge: Int? = nil) -> [UInt8] {
        let notification = push.notification ?? PushNotification()
        let ios = notification.ios ?? IOSNotification()
        var aps: [String: Any] = [:]
        switch push.pushType {
        case .background:
            aps["content-available"] = 1
        case .alert, .voip:
            if let alert = ios.alert {
                switch alert {
                case .text(let text): aps["alert"] = text
                case .parts(let title, let subtitle, let body):
                    var parts: [String: Any] = [:]
                    parts["title"] = title
                    parts["subtitle"] = subtitle
                    parts["body"] = body
                    aps["alert"] = parts
                }
            } else if let alert = notification.alert {
                aps["alert"] = alert
            }
            aps["sound"] = ios.sound
            if ios.contentAvailable == true { aps["content-available"] = 1 }
        }
        if let badge { aps["badge"] = badge } else if case .set(let value) = ios.badge { aps["badge"] = value }
        aps["thread-id"] = ios.threadID
        aps["category"] = ios.category
        if ios.mutableContent == true { aps["mutable-content"] = 1 }
        aps["interruption-level"] = ios.interruptionLevel
        var payload: [String: Any] = [:]
        for (key, value) in ios.extras ?? [:] where key != "aps" && key != "herald" { payload[key] = value }
        payload["aps"] = aps
        payload["herald"] = ["msg_id": messageID, "identifier": push.identifier(messageID: messageID)]
        return json(payload)
    }

    /// A silent APNs push that tells the app to remove the notifications with these
    /// identifiers: every identifier still pending recall for the device, since APNs
    /// coalesces background pushes.
    public static func apnsRecall(commandID: String, identifiers: [String]) -> [UInt8] {
        json([
            "aps": ["content-available": 1],
            "herald-recall": identifiers,
            "herald": ["type": "recall", "msg_id": commandID],
        ])
    }

    private static func deviceNotification(_ notification: PushNotification) -> [String: Any] {
        var fields: [String: Any] = [:]
        let ios = notification.ios
        switch ios?.alert {
        case .text(let text): fields["alert"] = text
        case .parts(let title, let subtitle, let body):
            fields["title"] = title
            fields["subtitle"] = subtitle
            fields["alert"] = body
        case nil: fields["alert"] = notification.alert
        }
        if fields["alert"] == nil, let alert = notification.alert { fields["alert"] = alert }
        if case .set(let value) = ios?.badge { fields["badge"] = value }
        fields["sound"] = ios?.sound
        if let extras = ios?.extras { fields["extras"] = extras }
        return fields
    }

    private static func json(_ object: [String: Any]) -> [UInt8] {
        // Only strings, numbers, arrays and dictionaries go in: serialisation can't fail.
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return Array(data)
    }
}
