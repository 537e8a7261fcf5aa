/// Renders what goes down each channel: the JSON a device gets over the long connection
/// (docs/protocol.md) and the APNs payload. Pure functions of the push.
public enum PushRendering {
    /// The long-connection payload of a push: a notification (or a replace command), an
    /// in-app message, or both in one object.
    public static func devicePayload(_ push: Push, messageID: String) -> [UInt8] {
        var body: [String: RenderedJSON] = ["msg_id": .string(messageID), "identifier": .string(push.identifier(messageID: messageID))]
        if let notification = push.notification {
            body["type"] = .string(push.replace != nil ? "replace" : "notification")
            body["notification"] = .object(deviceNotification(notification))
        } else {
            body["type"] = .string("message")
        }
        if let message = push.message {
            var fields: [String: RenderedJSON] = ["msg_content": .string(message.msgContent)]
            fields["title"] = message.title.map(RenderedJSON.string)
            fields["content_type"] = message.contentType.map(RenderedJSON.string)
            if let extras = message.extras { fields["extras"] = .object(extras) }
            body["message"] = .object(fields)
        }
        return RenderedJSON.object(body).bytes
    }

    /// A recall command over the long connection.
    public static func deviceRecall(commandID: String, identifiers: [String]) -> [UInt8] {
        RenderedJSON.object(["type": .string("recall"), "msg_id": .string(commandID), "identifiers": .strings(identifiers)]).bytes
    }

    /// The APNs payload (`aps` plus extras plus Herald's own fields). `badge` is the
    /// device's resulting badge when the push sets or changes it.
    public static func apnsPayload(_ push: Push, messageID: String, badge: Int? = nil) -> [UInt8] {
        let notification = push.notification ?? PushNotification()
        let ios = notification.ios ?? IOSNotification()
        var aps: [String: RenderedJSON] = [:]
        switch push.pushType {
        case .background:
            aps["content-available"] = .int(1)
        case .alert, .voip:
            if let alert = ios.alert {
                switch alert {
                case .text(let text): aps["alert"] = .string(text)
                case .parts(let title, let subtitle, let body):
                    var parts: [String: RenderedJSON] = [:]
                    parts["title"] = title.map(RenderedJSON.string)
                    parts["subtitle"] = subtitle.map(RenderedJSON.string)
                    parts["body"] = body.map(RenderedJSON.string)
                    aps["alert"] = .object(parts)
                }
            } else if let alert = notification.alert {
                aps["alert"] = .string(alert)
            }
            aps["sound"] = ios.sound.map(RenderedJSON.string)
            if ios.contentAvailable == true { aps["content-available"] = .int(1) }
        }
        if let badge { aps["badge"] = .int(badge) } else if case .set(let value) = ios.badge { aps["badge"] = .int(value) }
        aps["thread-id"] = ios.threadID.map(RenderedJSON.string)
        aps["category"] = ios.category.map(RenderedJSON.string)
        if ios.mutableContent == true { aps["mutable-content"] = .int(1) }
        aps["interruption-level"] = ios.interruptionLevel.map(RenderedJSON.string)
        var payload: [String: RenderedJSON] = [:]
        for (key, value) in ios.extras ?? [:] where key != "aps" && key != "herald" { payload[key] = .string(value) }
        payload["aps"] = .object(aps)
        payload["herald"] = .object(["msg_id": messageID, "identifier": push.identifier(messageID: messageID)])
        return RenderedJSON.object(payload).bytes
    }

    /// A silent APNs push that tells the app to remove the notifications with these
    /// identifiers: every identifier still pending recall for the device, since APNs
    /// coalesces background pushes.
    public static func apnsRecall(commandID: String, identifiers: [String]) -> [UInt8] {
        RenderedJSON.object([
            "aps": .object(["content-available": .int(1)]),
            "herald-recall": .strings(identifiers),
            "herald": .object(["type": "recall", "msg_id": commandID]),
        ]).bytes
    }

    private static func deviceNotification(_ notification: PushNotification) -> [String: RenderedJSON] {
        var fields: [String: RenderedJSON] = [:]
        let ios = notification.ios
        switch ios?.alert {
        case .text(let text): fields["alert"] = .string(text)
        case .parts(let title, let subtitle, let body):
            fields["title"] = title.map(RenderedJSON.string)
            fields["subtitle"] = subtitle.map(RenderedJSON.string)
            fields["alert"] = body.map(RenderedJSON.string)
        case nil: fields["alert"] = notification.alert.map(RenderedJSON.string)
        }
        if fields["alert"] == nil, let alert = notification.alert { fields["alert"] = .string(alert) }
        if case .set(let value) = ios?.badge { fields["badge"] = .int(value) }
        fields["sound"] = ios?.sound.map(RenderedJSON.string)
        if let extras = ios?.extras { fields["extras"] = .object(extras) }
        return fields
    }
}
