import Foundation

extension HeraldEvent {
    /// What an APNs notification's `userInfo` means, as Herald sends it (docs/protocol.md):
    /// - a notification: `aps` (alert as text or title / subtitle / body, badge, sound,
    ///   category), `herald` (`msg_id`, `identifier`, `media_url`), the category's
    ///   `notification_config`, and every other top-level key as an extra;
    /// - a silent recall: `herald-recall`, the identifiers to remove;
    /// - a category sent ahead: silent, with `notification_config` and nothing to show.
    ///
    /// Nothing for a notification that isn't Herald's (no `herald.msg_id`), and nothing for
    /// a malformed one, with the reason in `dropped`, never a crash: `userInfo` comes from
    /// outside the app.
    public static func fromAPNs(userInfo: [AnyHashable: Any], dropped: ((String) -> Void)? = nil) -> [HeraldEvent] {
        guard let herald = userInfo["herald"] as? [String: Any], let msgID = herald["msg_id"] as? String, !msgID.isEmpty else {
            return []
        }
        if let recall = userInfo["herald-recall"] {
            guard let identifiers = recall as? [String], !identifiers.isEmpty, identifiers.allSatisfy({ !$0.isEmpty }) else {
                dropped?("herald-recall is not a list of identifiers")
                return []
            }
            return [.recall(identifiers: identifiers)]
        }
        let aps = userInfo["aps"] as? [String: Any] ?? [:]
        let configs = NotificationConfig.all(userInfo: userInfo)
        if userInfo["notification_config"] != nil, configs.isEmpty {
            dropped?("notification_config does not parse")
        }
        let (title, subtitle, body) = alertParts(aps["alert"])
        if aps["alert"] != nil, title == nil, subtitle == nil, body == nil {
            dropped?("aps.alert is neither text nor an object of texts")
            return []
        }
        guard title != nil || body != nil || subtitle != nil else {
            // Silent: a category sent ahead, or a wake-up with nothing to show.
            return configs.map(HeraldEvent.categoryConfig)
        }
        var extras: [String: String] = [:]
        for case (let key as String, let value) in userInfo where !["aps", "herald", "herald-recall", "notification_config"].contains(key) {
            extras[key] = text(value)
        }
        let category = aps["category"] as? String
        let sound = (aps["sound"] as? String) ?? ((aps["sound"] as? [String: Any])?["name"] as? String)
        let notification = Notification(
            messageID: msgID,
            identifier: (herald["identifier"] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? msgID,
            title: title,
            subtitle: subtitle,
            alert: body,
            badge: aps["badge"] as? Int,
            sound: sound,
            category: category,
            extras: extras,
            config: configs.first { $0.identifier == category } ?? configs.first,
            mediaURL: herald["media_url"] as? String
        )
        return [.notification(notification)]
    }

    /// `aps.alert` as title, subtitle and body.
    private static func alertParts(_ alert: Any?) -> (String?, String?, String?) {
        if let text = alert as? String { return (nil, nil, text) }
        guard let parts = alert as? [String: Any] else { return (nil, nil, nil) }
        return (parts["title"] as? String, parts["subtitle"] as? String, parts["body"] as? String)
    }

    /// An extra as the app gets it: a string as it is, any other value as its JSON text.
    private static func text(_ value: Any) -> String {
        if let string = value as? String { return string }
        if JSONSerialization.isValidJSONObject(value),
            let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])
        {
            return String(decoding: data, as: UTF8.self)
        }
        if let number = value as? NSNumber { return number.stringValue }
        return "\(value)"
    }
}

extension HeraldEvent.Notification {
    /// The notification as an APNs `userInfo` carries it (``HeraldEvent/fromAPNs(userInfo:dropped:)``
    /// reads it back as it is): what the SDK puts in the local notification it posts for a
    /// copy from the connection, so a tap on it resolves as a tap on the APNs copy does.
    public var userInfo: [String: Any] {
        var alert: [String: Any] = [:]
        alert["title"] = title
        alert["subtitle"] = subtitle
        alert["body"] = self.alert
        var aps: [String: Any] = [:]
        aps["alert"] = alert.isEmpty ? nil : alert
        aps["badge"] = badge
        aps["sound"] = sound
        aps["category"] = category
        var herald: [String: Any] = ["msg_id": messageID, "identifier": identifier]
        herald["media_url"] = mediaURL
        var userInfo: [String: Any] = [:]
        for (key, value) in extras where !["aps", "herald", "herald-recall", "notification_config"].contains(key) {
            userInfo[key] = value
        }
        userInfo["aps"] = aps
        userInfo["herald"] = herald
        if let config, let data = try? JSONEncoder().encode(config), let object = try? JSONSerialization.jsonObject(with: data) {
            userInfo["notification_config"] = object
        }
        return userInfo
    }
}
