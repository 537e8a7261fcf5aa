/// The body of `POST /v3/push` and `POST /v3/push/validate`.
struct PushRequest: Encodable {
    enum Audience {
        case all
        case targets(Targets)
    }

    struct Targets: Encodable {
        var registrationIDs: [String] = []
        var aliases: [String] = []
        var tags: [String] = []
        var tagsAnd: [String] = []
        var tagsNot: [String] = []

        enum CodingKeys: String, CodingKey {
            case registrationIDs = "registration_id"
            case aliases = "alias"
            case tags = "tag"
            case tagsAnd = "tag_and"
            case tagsNot = "tag_not"
        }

        var isEmpty: Bool { registrationIDs.isEmpty && aliases.isEmpty && tags.isEmpty && tagsAnd.isEmpty && tagsNot.isEmpty }

        /// Only the forms in use: `{"alias": ["alice"]}`, not empty arrays for the rest.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            for (values, key) in [
                (registrationIDs, CodingKeys.registrationIDs), (aliases, .aliases), (tags, .tags), (tagsAnd, .tagsAnd), (tagsNot, .tagsNot),
            ]
            where !values.isEmpty {
                try container.encode(values, forKey: key)
            }
        }
    }

    struct Notification: Encodable {
        var alert: String?
        var ios: IOS?
    }

    struct IOS: Encodable {
        enum Alert: Encodable {
            case text(String)
            case fields(title: String?, subtitle: String?, body: String?)

            func encode(to encoder: any Encoder) throws {
                switch self {
                case .text(let text):
                    var container = encoder.singleValueContainer()
                    try container.encode(text)
                case .fields(let title, let subtitle, let body):
                    var container = encoder.container(keyedBy: FieldKeys.self)
                    try container.encodeIfPresent(title, forKey: .title)
                    try container.encodeIfPresent(subtitle, forKey: .subtitle)
                    try container.encodeIfPresent(body, forKey: .body)
                }
            }

            enum FieldKeys: String, CodingKey { case title, subtitle, body }
        }

        /// A number, or `"+N"` / `"-N"` to change the device's current badge.
        enum Badge: Encodable, Equatable {
            case set(Int)
            case change(Int)

            /// `3`, `+1` or `-1`.
            init?(_ text: String) {
                let sign = text.first
                if sign == "+" || sign == "-", let amount = Int(text.dropFirst()), amount >= 0, !text.dropFirst().hasPrefix("+") {
                    self = .change(sign == "+" ? amount : -amount)
                } else if let value = Int(text), value >= 0, sign != "+" {
                    self = .set(value)
                } else {
                    return nil
                }
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                switch self {
                case .set(let value): try container.encode(value)
                case .change(let delta): try container.encode(delta < 0 ? "\(delta)" : "+\(delta)")
                }
            }
        }

        var alert: Alert?
        var sound: String?
        var badge: Badge?
        var threadID: String?
        var category: String?
        var contentAvailable: Bool?
        var mutableContent: Bool?
        var interruptionLevel: String?
        var extras: [String: String]?
        var pushType: String?
        var mediaURL: String?

        enum CodingKeys: String, CodingKey {
            case alert, sound, badge, category, extras
            case mediaURL = "media_url"
            case threadID = "thread-id"
            case contentAvailable = "content-available"
            case mutableContent = "mutable-content"
            case interruptionLevel = "interruption-level"
            case pushType = "push_type"
        }
    }

    struct Message: Encodable {
        var msgContent: String
        var title: String?
        var contentType: String?
        var extras: [String: String]?

        enum CodingKeys: String, CodingKey {
            case title, extras
            case msgContent = "msg_content"
            case contentType = "content_type"
        }
    }

    struct Options: Encodable {
        var timeToLive: Int?
        var identifier: String?
        var replace: String?
        var apnsProduction: Bool?
        var priority: Int?
        /// Minutes to spread the push over (JPush's `big_push_duration`).
        var bigPushDuration: Int? = nil

        enum CodingKeys: String, CodingKey {
            case identifier, replace, priority
            case timeToLive = "time_to_live"
            case apnsProduction = "apns_production"
            case bigPushDuration = "big_push_duration"
        }

        var isEmpty: Bool {
            timeToLive == nil && identifier == nil && replace == nil && apnsProduction == nil && priority == nil && bigPushDuration == nil
        }
    }

    var audience: Audience
    var notification: Notification?
    var message: Message?
    var options: Options?
    var cid: String?

    enum CodingKeys: String, CodingKey { case audience, notification, message, options, cid }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch audience {
        case .all: try container.encode("all", forKey: .audience)
        case .targets(let targets): try container.encode(targets, forKey: .audience)
        }
        try container.encodeIfPresent(notification, forKey: .notification)
        try container.encodeIfPresent(message, forKey: .message)
        try container.encodeIfPresent(options, forKey: .options)
        try container.encodeIfPresent(cid, forKey: .cid)
    }
}
