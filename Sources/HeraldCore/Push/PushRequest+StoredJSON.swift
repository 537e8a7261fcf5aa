extension PushRequest {
    /// The request as the store keeps it (`messages.request`), written without JSONEncoder:
    /// it is written for every push. Decoding it gives this request back (a test holds the
    /// two to each other); the keys are the ones ``PushRequest``'s Codable conformance uses.
    public var storedJSON: [UInt8] {
        var writer = JSONObjectWriter()
        switch platform {
        case .all: writer.field("platform", "all")
        case .list(let names): writer.field("platform", names)
        case nil: break
        }
        switch audience {
        case .all:
            writer.field("audience", "all")
        case .filter(let filter):
            writer.object("audience") { $0.write(filter) }
        }
        if let notification {
            writer.object("notification") { $0.write(notification) }
        }
        if let message {
            writer.object("message") { $0.write(message) }
        }
        writer.field("inapp_message", inappMessage?.fields)
        writer.field("notification_3rd", notification3rd?.fields)
        writer.field("sms_message", smsMessage?.fields)
        writer.field("live_activity", liveActivity?.fields)
        writer.field("callback", callback?.fields)
        if let options {
            writer.object("options") { $0.write(options) }
        }
        writer.field("cid", cid)
        return writer.finish()
    }
}

extension JSONObjectWriter {
    /// An in-app message's fields, as a request has them and as the device gets them.
    mutating func write(_ message: InAppMessage) {
        field("msg_content", message.msgContent)
        field("title", message.title)
        field("content_type", message.contentType)
        field("extras", message.extras)
    }

    fileprivate mutating func write(_ filter: AudienceFilter) {
        field("registration_id", filter.registrationID)
        field("alias", filter.alias)
        field("tag", filter.tag)
        field("tag_and", filter.tagAnd)
        field("tag_not", filter.tagNot)
        field("segment", filter.segment)
        field("abtest", filter.abtest)
        field("live_activity_id", filter.liveActivityID)
        field("file", filter.file?.fields)
    }

    fileprivate mutating func write(_ options: PushOptions) {
        field("sendno", options.sendno.map(JSONValue.int))
        field("time_to_live", options.timeToLive)
        field("identifier", options.identifier)
        field("replace", options.replace)
        field("apns_production", options.apnsProduction)
        field("priority", options.priority)
        field("apns_collapse_id", options.apnsCollapseID)
        field("override_msg_id", options.overrideMsgID)
        field("big_push_duration", options.bigPushDuration)
        field("classification", options.classification)
        field("third_party_channel", options.thirdPartyChannel?.fields)
        for key in options.unapplied.keys.sorted() { field(key, options.unapplied[key]) }
    }

    fileprivate mutating func write(_ notification: PushNotification) {
        field("alert", notification.alert)
        if let ios = notification.ios {
            object("ios") { $0.write(ios) }
        }
        field("android", notification.android?.fields)
        field("voip", notification.voip?.fields)
        field("hmos", notification.hmos?.fields)
        field("quickapp", notification.quickapp?.fields)
        field("winphone", notification.winphone?.fields)
    }

    fileprivate mutating func write(_ ios: IOSNotification) {
        switch ios.alert {
        case .text(let text):
            field("alert", text)
        case .parts(let parts):
            object("alert") { fields in
                fields.field("title", parts.title)
                fields.field("subtitle", parts.subtitle)
                fields.field("body", parts.body)
                for (key, value) in parts.localization {
                    switch value {
                    case .text(let text): fields.field(key, text)
                    case .list(let values): fields.field(key, values)
                    }
                }
            }
        case nil:
            break
        }
        switch ios.sound {
        case .named(let name):
            field("sound", name)
        case .critical(let sound):
            object("sound") { fields in
                fields.field("critical", sound.critical)
                fields.field("name", sound.name)
                fields.field("volume", sound.volume.map(JSONValue.double))
            }
        case nil:
            break
        }
        switch ios.badge {
        case .set(let value): field("badge", value)
        case .change(let delta): field("badge", delta < 0 ? "\(delta)" : "+\(delta)")
        case nil: break
        }
        field("thread-id", ios.threadID)
        field("category", ios.category)
        field("content-available", ios.contentAvailable)
        field("mutable-content", ios.mutableContent)
        field("interruption-level", ios.interruptionLevel)
        field("extras", ios.extras)
        field("push_type", ios.pushType?.rawValue)
        field("media_url", ios.mediaURL)
        field("relevance-score", ios.relevanceScore.map(JSONValue.double))
        field("target-content-id", ios.targetContentID)
        field("filter-criteria", ios.filterCriteria)
        field("notification_config", ios.notificationConfig)
        if let localizations = ios.localizations {
            field("localizations", localizations.mapValues(\.json))
        }
    }
}
