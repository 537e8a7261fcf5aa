extension PushRequest {
    /// The request as the store keeps it (`messages.request`), written without JSONEncoder:
    /// it is written for every push. Decoding it gives this request back (a test holds the
    /// two to each other); the keys are the ones ``PushRequest``'s Codable conformance uses.
    public var storedJSON: [UInt8] {
        var writer = JSONObjectWriter()
        switch audience {
        case .all:
            writer.field("audience", "all")
        case .filter(let filter):
            writer.object("audience") { audience in
                audience.field("registration_id", filter.registrationID)
                audience.field("alias", filter.alias)
                audience.field("tag", filter.tag)
                audience.field("tag_and", filter.tagAnd)
                audience.field("tag_not", filter.tagNot)
            }
        }
        if let notification {
            writer.object("notification") { $0.write(notification) }
        }
        if let message {
            writer.object("message") { $0.write(message) }
        }
        if let options {
            writer.object("options") { fields in
                fields.field("time_to_live", options.timeToLive)
                fields.field("identifier", options.identifier)
                fields.field("replace", options.replace)
                fields.field("apns_production", options.apnsProduction)
                fields.field("priority", options.priority)
            }
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

    fileprivate mutating func write(_ notification: PushNotification) {
        field("alert", notification.alert)
        guard let ios = notification.ios else { return }
        object("ios") { fields in
            switch ios.alert {
            case .text(let text):
                fields.field("alert", text)
            case .parts(let title, let subtitle, let body):
                fields.object("alert") { parts in
                    parts.field("title", title)
                    parts.field("subtitle", subtitle)
                    parts.field("body", body)
                }
            case nil:
                break
            }
            fields.field("sound", ios.sound)
            switch ios.badge {
            case .set(let value): fields.field("badge", value)
            case .change(let delta): fields.field("badge", delta < 0 ? "\(delta)" : "+\(delta)")
            case nil: break
            }
            fields.field("thread-id", ios.threadID)
            fields.field("category", ios.category)
            fields.field("content-available", ios.contentAvailable)
            fields.field("mutable-content", ios.mutableContent)
            fields.field("interruption-level", ios.interruptionLevel)
            fields.field("extras", ios.extras)
            fields.field("push_type", ios.pushType?.rawValue)
        }
    }
}
