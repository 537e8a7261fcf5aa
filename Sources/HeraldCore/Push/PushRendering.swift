/// Renders what goes down each channel: the JSON a device gets over the MQTT connection
/// (docs/protocol.md) and the APNs payloads. Pure functions of the push.
public enum PushRendering {
    /// What devices get over the MQTT connection: Android devices their rendering of the
    /// notification, every other device the standard one (``DevicePayloads``).
    public static func devicePayloads(_ push: Push, msgID: String) -> DevicePayloads {
        let standard = devicePayload(push, msgID: msgID, android: false)
        // The same rendering for every device: rendered once.
        guard let notification = push.notification, notification.rendersAndroidPart(android: true) != notification.rendersAndroidPart(android: false),
            notification.android != nil || notification.ios != nil || notification.voip != nil
        else { return DevicePayloads(standard: standard) }
        return DevicePayloads(standard: standard, android: devicePayload(push, msgID: msgID, android: true))
    }

    /// The long-connection payload of a push: a notification (or a replace command), an
    /// in-app message, or both in one object; the notification rendered for Android
    /// devices (`android`) or for the others.
    public static func devicePayload(_ push: Push, msgID: String, android: Bool = false) -> [UInt8] {
        // Written field by field (not through RenderedJSON's sorted dictionaries): every
        // copy stored for a device is rendered here.
        var json = JSONObjectWriter()
        json.field("msg_id", msgID)
        json.field("identifier", push.identifier(msgID: msgID))
        if push.isCategoryDelivery {
            // A category sent ahead (`POST /v3/categories/{id}/deliver`): nothing to show.
            json.field("type", "category_config")
            json.field("notification_config", push.notification?.ios?.notificationConfig)
            return json.finish()
        }
        if let notification = push.notification {
            json.field("type", push.replace != nil ? "replace" : "notification")
            if notification.rendersAndroidPart(android: android) {
                json.object("notification") { $0.writeAndroidNotification(notification) }
            } else {
                json.object("notification") { $0.writeDeviceNotification(notification) }
            }
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

    /// The payload of the push's APNs notification: for a notification that is only a VoIP
    /// payload, ``voipPayload(_:msgID:)``; else `aps` plus extras plus Herald's own fields.
    /// `badge` is the device's resulting badge when the push sets or changes it.
    public static func apnsPayload(_ push: Push, msgID: String, badge: Int? = nil) -> [UInt8] {
        let notification = push.notification ?? PushNotification()
        if notification.isVoIPOnly { return voipPayload(push, msgID: msgID) }
        let ios = notification.ios ?? IOSNotification()
        var aps: [String: RenderedJSON] = [:]
        switch push.pushType {
        case .background:
            aps["content-available"] = .int(1)
        case .alert, .voip:
            switch ios.alert {
            case .text(let text): aps["alert"] = .string(text)
            case .parts(let parts): aps["alert"] = .object(parts.rendered)
            case nil: aps["alert"] = notification.alert.map(RenderedJSON.string)
            }
            aps["sound"] = ios.sound.map(\.rendered)
            if ios.contentAvailable == true { aps["content-available"] = .int(1) }
        }
        if let badge { aps["badge"] = .int(badge) } else if case .set(let value) = ios.badge { aps["badge"] = .int(value) }
        aps["thread-id"] = ios.threadID.map(RenderedJSON.string)
        aps["category"] = ios.category.map(RenderedJSON.string)
        // A background push is never shown: no service extension runs for it.
        if push.pushType != .background, ios.needsServiceExtension { aps["mutable-content"] = .int(1) }
        aps["interruption-level"] = ios.interruptionLevel.map(RenderedJSON.string)
        aps["relevance-score"] = ios.relevanceScore.map { .value(.double($0)) }
        aps["target-content-id"] = ios.targetContentID.map(RenderedJSON.string)
        aps["filter-criteria"] = ios.filterCriteria.map(RenderedJSON.string)
        var payload: [String: RenderedJSON] = [:]
        for (key, value) in ios.extras ?? [:] where !Self.reservedPayloadKeys.contains(key) { payload[key] = .value(value) }
        payload["aps"] = .object(aps)
        var herald: [String: RenderedJSON] = ["msg_id": .string(msgID), "identifier": .string(push.identifier(msgID: msgID))]
        herald["media_url"] = ios.mediaURL.map(RenderedJSON.string)
        payload["herald"] = .object(herald)
        payload["notification_config"] = ios.notificationConfig.map(RenderedJSON.value)
        return RenderedJSON.object(payload).bytes
    }

    /// The payload keys Herald writes itself: extras of these names are left out.
    static let reservedPayloadKeys: Set<String> = ["aps", "herald", "notification_config"]

    /// The payload of the VoIP push: `notification.voip` as given, plus Herald's own fields.
    public static func voipPayload(_ push: Push, msgID: String) -> [UInt8] {
        var payload: [String: RenderedJSON] = [:]
        for (key, value) in push.notification?.voip?.fields ?? [:] where key != "herald" { payload[key] = .value(value) }
        payload["herald"] = .object(["msg_id": msgID, "identifier": push.identifier(msgID: msgID)])
        return RenderedJSON.object(payload).bytes
    }

    /// A message id of the longest length, for size bounds.
    static let longestMsgID = String(repeating: "f", count: Identifiers.msgIDLength)

    /// The size of the largest APNs payload the push can have on any device: rendered with
    /// a message id of full length and, when the push changes the badge, the largest badge
    /// a device can have.
    public static func apnsPayloadSizeBound(_ push: Push) -> Int {
        let badge: Int? =
            switch push.notification?.ios?.badge {
            case .change: Int(Int32.max)
            case .set, nil: nil
            }
        return apnsPayload(push, msgID: longestMsgID, badge: badge).count
    }

    /// A bound no rendering can exceed: every string byte escaped (6 bytes at most), plus
    /// the keys, punctuation and numbers of the largest `aps` and `herald` objects.
    static func apnsPayloadQuickBound(_ push: Push) -> Int {
        let notification = push.notification
        if notification?.isVoIPOnly == true {
            return JSONValue.renderedSizeBound(notification?.voip?.fields ?? [:]) + (PushLimits.maxIdentifierBytes + Identifiers.msgIDLength) * 6
                + 100
        }
        let ios = notification?.ios
        var bytes = 0
        var keys = 0
        switch ios?.alert {
        case .text(let text): bytes += text.utf8.count
        case .parts(let parts):
            bytes += (parts.title?.utf8.count ?? 0) + (parts.subtitle?.utf8.count ?? 0) + (parts.body?.utf8.count ?? 0)
            for (_, value) in parts.localization {
                bytes += value.bytes
                keys += 1
            }
        case nil: bytes += notification?.alert?.utf8.count ?? 0
        }
        switch ios?.sound {
        case .named(let name): bytes += name.utf8.count
        case .critical(let sound): bytes += (sound.name?.utf8.count ?? 0) + 64
        case nil: break
        }
        bytes += (ios?.threadID?.utf8.count ?? 0) + (ios?.category?.utf8.count ?? 0)
        bytes += ios?.interruptionLevel?.utf8.count ?? 0
        bytes += (ios?.mediaURL?.utf8.count ?? 0) + (ios?.targetContentID?.utf8.count ?? 0) + (ios?.filterCriteria?.utf8.count ?? 0) + 64
        bytes += PushLimits.maxIdentifierBytes + Identifiers.msgIDLength
        // Keys, quotes, colons, commas and braces: at most 300 bytes, and 20 per
        // localization key; the extras bound their own.
        return bytes * 6 + 300 + 20 * keys + JSONValue.renderedSizeBound(ios?.extras ?? [:])
            + (ios?.notificationConfig.map { $0.renderedSizeBound + 24 } ?? 0)
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

/// What a message's copies carry over the MQTT connection: the standard rendering, and the
/// Android one when it differs.
public struct DevicePayloads: Sendable, Hashable {
    public var standard: [UInt8]
    /// What Android devices get, when it differs from ``standard``.
    public var android: [UInt8]?

    public init(standard: [UInt8], android: [UInt8]? = nil) {
        self.standard = standard
        self.android = android
    }

    /// The payload a device of `platform` gets.
    public func payload(for platform: Platform) -> [UInt8] {
        platform == .android ? android ?? standard : standard
    }
}

extension IOSAlert {
    /// The alert dictionary as APNs takes it.
    var rendered: [String: RenderedJSON] {
        var parts: [String: RenderedJSON] = [:]
        parts["title"] = title.map(RenderedJSON.string)
        parts["subtitle"] = subtitle.map(RenderedJSON.string)
        parts["body"] = body.map(RenderedJSON.string)
        for (key, value) in localization {
            switch value {
            case .text(let text): parts[key] = .string(text)
            case .list(let values): parts[key] = .strings(values)
            }
        }
        return parts
    }
}

extension IOSNotification.Sound {
    /// The sound as APNs takes it: a name, or the critical-alert dictionary.
    var rendered: RenderedJSON {
        switch self {
        case .named(let name): return .string(name)
        case .critical(let sound):
            var fields: [String: RenderedJSON] = ["critical": .int(sound.critical)]
            fields["name"] = sound.name.map(RenderedJSON.string)
            fields["volume"] = sound.volume.map { .value(.double($0)) }
            return .object(fields)
        }
    }
}
