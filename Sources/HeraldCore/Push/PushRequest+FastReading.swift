extension PushRequest {
    /// Reads a request body in one pass, for the shapes pushes usually have (JPush's
    /// documented bodies among them), without JSONDecoder (whose containers and generic
    /// machinery cost more than the rest of accepting a push).
    ///
    /// Nil for anything it doesn't read exactly as JSONDecoder and the Codable conformance
    /// would: the caller then decodes with JSONDecoder, which also gives the error. So it
    /// never accepts what JSONDecoder refuses; it leaves out strings with escapes, `null`,
    /// numbers that aren't plain integers, repeated keys, unknown keys, a critical-alert
    /// sound and JPush's options Herald doesn't apply. A test holds it to JSONDecoder over
    /// every field and many malformed bodies.
    public static func fastRead(_ bytes: UnsafeRawBufferPointer) -> PushRequest? {
        var reader = FastJSONReader(bytes)
        var audience: PushAudience?
        var request = PushRequest(audience: .all)
        let keys = [
            "platform", "audience", "notification", "message", "options", "cid", "inapp_message", "notification_3rd", "sms_message",
            "live_activity", "callback",
        ]
        let read = reader.object(keys: keys) { reader, key in
            switch key {
            case 0:
                if reader.peek == UInt8(ascii: "\"") {
                    guard reader.string() == "all" else { return false }
                    request.platform = .all
                    return true
                }
                return set(&request.platform, reader.strings().map(PushPlatforms.list))
            case 1:
                if reader.peek == UInt8(ascii: "\"") {
                    guard reader.string() == "all" else { return false }
                    audience = .all
                } else {
                    audience = reader.audienceFilter().map(PushAudience.filter)
                }
                return audience != nil
            case 2: return set(&request.notification, reader.notification())
            case 3: return set(&request.message, reader.inAppMessage())
            case 4: return set(&request.options, reader.options())
            case 5: return set(&request.cid, reader.string())
            case 6: return set(&request.inappMessage, reader.objectValue().map { FreeJSONObject(fields: $0) })
            case 7: return set(&request.notification3rd, reader.objectValue().map { FreeJSONObject(fields: $0) })
            case 8: return set(&request.smsMessage, reader.objectValue().flatMap { try? SMSMessage(fields: $0) })
            case 9: return set(&request.liveActivity, reader.objectValue().flatMap { try? LiveActivity(fields: $0) })
            default: return set(&request.callback, reader.objectValue().flatMap { try? PushCallback(fields: $0) })
            }
        }
        guard read, reader.atEnd, let audience else { return nil }
        request.audience = audience
        return request
    }
}

/// Stores `value` in `field`; false when there is none (the body isn't read fast).
private func set<Value>(_ field: inout Value?, _ value: Value?) -> Bool {
    field = value
    return value != nil
}

extension FastJSONReader {
    fileprivate mutating func audienceFilter() -> AudienceFilter? {
        var filter = AudienceFilter()
        let read = object(keys: ["registration_id", "alias", "tag", "tag_and", "tag_not"]) { reader, key in
            guard let values = reader.strings() else { return false }
            switch key {
            case 0: filter.registrationID = values
            case 1: filter.alias = values
            case 2: filter.tag = values
            case 3: filter.tagAnd = values
            default: filter.tagNot = values
            }
            return true
        }
        return read ? filter : nil
    }

    fileprivate mutating func notification() -> PushNotification? {
        var notification = PushNotification()
        let read = object(keys: ["alert", "ios", "android", "voip", "hmos", "quickapp", "winphone"]) { reader, key in
            switch key {
            case 0: return set(&notification.alert, reader.string())
            case 1: return set(&notification.ios, reader.iosNotification())
            case 2: return set(&notification.android, reader.objectValue().flatMap { try? AndroidNotification(fields: $0) })
            case 3: return set(&notification.voip, reader.objectValue().map { FreeJSONObject(fields: $0) })
            case 4: return set(&notification.hmos, reader.objectValue().map { FreeJSONObject(fields: $0) })
            case 5: return set(&notification.quickapp, reader.objectValue().map { FreeJSONObject(fields: $0) })
            default: return set(&notification.winphone, reader.objectValue().map { FreeJSONObject(fields: $0) })
            }
        }
        return read ? notification : nil
    }

    private mutating func iosNotification() -> IOSNotification? {
        var ios = IOSNotification()
        let keys = [
            "alert", "sound", "badge", "thread-id", "category", "content-available", "mutable-content",
            "interruption-level", "extras", "push_type",
        ]
        let read = object(keys: keys) { reader, key in
            switch key {
            case 0: return set(&ios.alert, reader.iosAlert())
            case 1: return set(&ios.sound, reader.string().map(IOSNotification.Sound.named))
            case 2: return set(&ios.badge, reader.badge())
            case 3: return set(&ios.threadID, reader.string())
            case 4: return set(&ios.category, reader.string())
            case 5: return set(&ios.contentAvailable, reader.flag())
            case 6: return set(&ios.mutableContent, reader.flag())
            case 7: return set(&ios.interruptionLevel, reader.string())
            case 8: return set(&ios.extras, reader.objectValue())
            default: return set(&ios.pushType, reader.string().flatMap(IOSPushType.init(rawValue:)))
            }
        }
        return read ? ios : nil
    }

    private mutating func iosAlert() -> IOSNotification.Alert? {
        if peek == UInt8(ascii: "\"") { return string().map(IOSNotification.Alert.text) }
        var alert = IOSAlert()
        let keys = [
            "title", "subtitle", "body", "title-loc-key", "title-loc-args", "subtitle-loc-key", "subtitle-loc-args", "loc-key",
            "loc-args", "launch-image", "action-loc-key",
        ]
        let read = object(keys: keys) { reader, part in
            switch part {
            case 0: return set(&alert.title, reader.string())
            case 1: return set(&alert.subtitle, reader.string())
            case 2: return set(&alert.body, reader.string())
            case 3: return set(&alert.titleLocKey, reader.string())
            case 4: return set(&alert.titleLocArgs, reader.strings())
            case 5: return set(&alert.subtitleLocKey, reader.string())
            case 6: return set(&alert.subtitleLocArgs, reader.strings())
            case 7: return set(&alert.locKey, reader.string())
            case 8: return set(&alert.locArgs, reader.strings())
            case 9: return set(&alert.launchImage, reader.string())
            default: return set(&alert.actionLocKey, reader.string())
            }
        }
        return read ? .parts(alert) : nil
    }

    /// true / false, or 1 / 0 (as ``IOSNotification/Flag`` decodes).
    private mutating func flag() -> Bool? {
        if let flag = bool() { return flag }
        switch int() {
        case 0: return false
        case 1: return true
        default: return nil
        }
    }

    /// A number at least 0, or a string ``IOSNotification/Badge`` takes.
    private mutating func badge() -> IOSNotification.Badge? {
        if peek == UInt8(ascii: "\"") { return string().flatMap(IOSNotification.Badge.init(text:)) }
        guard let number = int(), number >= 0 else { return nil }
        return .set(number)
    }

    fileprivate mutating func inAppMessage() -> InAppMessage? {
        var fields: (content: String?, title: String?, contentType: String?, extras: [String: JSONValue]?) = (nil, nil, nil, nil)
        let read = object(keys: ["msg_content", "title", "content_type", "extras"]) { reader, key in
            switch key {
            case 0: return set(&fields.content, reader.string())
            case 1: return set(&fields.title, reader.string())
            case 2: return set(&fields.contentType, reader.string())
            default: return set(&fields.extras, reader.objectValue())
            }
        }
        guard read, let content = fields.content else { return nil }
        return InAppMessage(msgContent: content, title: fields.title, contentType: fields.contentType, extras: fields.extras)
    }

    fileprivate mutating func options() -> PushOptions? {
        var options = PushOptions()
        let keys = [
            "time_to_live", "identifier", "replace", "apns_production", "priority", "sendno", "apns_collapse_id", "override_msg_id",
            "big_push_duration", "classification", "third_party_channel",
        ]
        let read = object(keys: keys) { reader, key in
            switch key {
            case 0: return set(&options.timeToLive, reader.int())
            case 1: return set(&options.identifier, reader.string())
            case 2: return set(&options.replace, reader.string())
            case 3: return set(&options.apnsProduction, reader.bool())
            case 4: return set(&options.priority, reader.int())
            case 5: return set(&options.sendno, reader.int().map(Int64.init))
            case 6: return set(&options.apnsCollapseID, reader.string())
            case 7:
                let text = reader.peek == UInt8(ascii: "\"") ? reader.string() : reader.int().map(String.init)
                return set(&options.overrideMsgID, text)
            case 8: return set(&options.bigPushDuration, reader.int())
            case 9: return set(&options.classification, reader.int())
            default: return set(&options.thirdPartyChannel, reader.objectValue().map { FreeJSONObject(fields: $0) })
            }
        }
        return read ? options : nil
    }
}
