/// Renders what goes down each channel: the JSON a device gets over the MQTT connection
/// (docs/protocol.md) and the APNs payload. Pure functions of the push.
public enum PushRendering {
    /// The long-connection payload of a push: a notification (or a replace command), an
    /// in-app message, or both in one object.
    public static func devicePayload(_ push: Push, msgID: String) -> [UInt8] {
        // Written field by field (not through RenderedJSON's sorted dictionaries): every
        // copy stored for a device is rendered here.
        var json = JSONObjectWriter()
        json.field("msg_id", msgID)
        json.field("identifier", push.identifier(msgID: msgID))
        if let notification = push.notification {
            json.field("type", push.replace != nil ? "replace" : "notification")
            json.object("notification") { $0.writeDeviceNotification(notification) }
        } else {
            json.field("type", "message")
        }
        if let message = push.message {
            json.object("message") { $0.write(message) }
        }
        return json.finish()
    }

    /// A recall command over the MQTT connection.
    public static func deviceRecall(commandID: String, identifiers: [String]) -> [UInt8] {
        RenderedJSON.object(["type": .string("recall"), "msg_id": .string(commandID), "identifiers": .strings(identifiers)]).bytes
    }

    /// The APNs payload (`aps` plus extras plus Herald's own fields). `badge` is the
    /// device's resulting badge when the push sets or changes it.
    public static func apnsPayload(_ push: Push, msgID: String, badge: Int? = nil) -> [UInt8] {
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
        payload["herald"] = .object(["msg_id": msgID, "identifier": push.identifier(msgID: msgID)])
        return RenderedJSON.object(payload).bytes
    }

    /// The size of the largest APNs payload the push can have on any device: rendered with
    /// a message id of full length and, when the push changes the badge, the largest badge
    /// a device can have.
    public static func apnsPayloadSizeBound(_ push: Push) -> Int {
        let msgID = String(repeating: "f", count: Identifiers.msgIDLength)
        let badge: Int? =
            switch push.notification?.ios?.badge {
            case .change: Int(Int32.max)
            case .set, nil: nil
            }
        return apnsPayload(push, msgID: msgID, badge: badge).count
    }

    /// A bound no rendering can exceed: every string byte escaped (6 bytes at most), plus
    /// the keys, punctuation and numbers of the largest `aps` and `herald` objects.
    static func apnsPayloadQuickBound(_ push: Push) -> Int {
        let notification = push.notification
        let ios = notification?.ios
        var bytes = 0
        switch ios?.alert {
        case .text(let text): bytes += text.utf8.count
        case .parts(let title, let subtitle, let body):
            bytes += (title?.utf8.count ?? 0) + (subtitle?.utf8.count ?? 0) + (body?.utf8.count ?? 0)
        case nil: bytes += notification?.alert?.utf8.count ?? 0
        }
        bytes += (ios?.sound?.utf8.count ?? 0) + (ios?.threadID?.utf8.count ?? 0) + (ios?.category?.utf8.count ?? 0)
        bytes += ios?.interruptionLevel?.utf8.count ?? 0
        var extras = 0
        for (key, value) in ios?.extras ?? [:] { extras += key.utf8.count + value.utf8.count }
        bytes += extras + PushLimits.maxIdentifierBytes + Identifiers.msgIDLength
        // Keys, quotes, colons, commas and braces: at most 300 bytes, 6 per extra.
        return bytes * 6 + 300 + 6 * (ios?.extras?.count ?? 0)
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

}

extension JSONObjectWriter {
    fileprivate mutating func writeDeviceNotification(_ notification: PushNotification) {
        let ios = notification.ios
        var alert = notification.alert
        switch ios?.alert {
        case .text(let text):
            alert = text
        case .parts(let title, let subtitle, let body):
            field("title", title)
            field("subtitle", subtitle)
            alert = body ?? notification.alert
        case nil:
            break
        }
        field("alert", alert)
        if case .set(let value) = ios?.badge { field("badge", value) }
        field("sound", ios?.sound)
        field("extras", ios?.extras)
    }
}
