/// `notification.ios`: what APNs shows (or, for background and VoIP pushes, delivers), with
/// JPush's fields and the values JPush takes for them.
public struct IOSNotification: Sendable, Hashable, Codable {
    /// A string, or title / subtitle / body and the localization keys.
    public var alert: Alert?
    /// A sound name, or the critical-alert dictionary.
    public var sound: Sound?
    /// A number, or "+N" / "-N" to change the device's badge by N.
    public var badge: Badge?
    public var threadID: String?
    public var category: String?
    /// `true` / `false`, or JPush's `1` / `0`.
    public var contentAvailable: Bool?
    public var mutableContent: Bool?
    /// passive, active, time-sensitive or critical.
    public var interruptionLevel: String?
    /// Any JSON values, beside `aps` in the payload.
    public var extras: [String: JSONValue]?
    /// alert (default), background (silent) or voip (to the VoIP token).
    public var pushType: IOSPushType?
    /// An http or https image, GIF, audio or video URL the app's Notification Service
    /// Extension downloads and attaches (`herald.media_url` in the APNs payload).
    public var mediaURL: String?
    /// 0 to 1: how the system ranks the notification in its summary.
    public var relevanceScore: Double?
    /// The window or scene a tap brings forward.
    public var targetContentID: String?
    /// The Focus filter criteria the notification matches.
    public var filterCriteria: String?
    /// The category the push names, as defined on the server (``NotificationCategory``)
    /// with its version: set by the API when it accepts the push, never by a request, so
    /// the message keeps the category as it was then.
    public var notificationConfig: JSONValue?
    /// The alert per BCP 47 language (`{"zh-Hans": {...}, "en": "..."}`): each device gets
    /// the one of its language (``PushLocalization``), else ``alert``.
    public var localizations: [String: Alert]?

    public init(
        alert: Alert? = nil,
        sound: Sound? = nil,
        badge: Badge? = nil,
        threadID: String? = nil,
        category: String? = nil,
        contentAvailable: Bool? = nil,
        mutableContent: Bool? = nil,
        interruptionLevel: String? = nil,
        extras: [String: JSONValue]? = nil,
        pushType: IOSPushType? = nil
    ) {
        self.alert = alert
        self.sound = sound
        self.badge = badge
        self.threadID = threadID
        self.category = category
        self.contentAvailable = contentAvailable
        self.mutableContent = mutableContent
        self.interruptionLevel = interruptionLevel
        self.extras = extras
        self.pushType = pushType
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case alert, sound, badge
        case threadID = "thread-id"
        case category
        case contentAvailable = "content-available"
        case mutableContent = "mutable-content"
        case interruptionLevel = "interruption-level"
        case extras
        case pushType = "push_type"
        case mediaURL = "media_url"
        case relevanceScore = "relevance-score"
        case targetContentID = "target-content-id"
        case filterCriteria = "filter-criteria"
        case notificationConfig = "notification_config"
        case localizations
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        alert = try container.decodeIfGiven(Alert.self, forKey: .alert)
        sound = try container.decodeIfGiven(Sound.self, forKey: .sound)
        badge = try container.decodeIfGiven(Badge.self, forKey: .badge)
        threadID = try container.decodeIfGiven(String.self, forKey: .threadID)
        category = try container.decodeIfGiven(String.self, forKey: .category)
        contentAvailable = try container.decodeIfGiven(Flag.self, forKey: .contentAvailable)?.value
        mutableContent = try container.decodeIfGiven(Flag.self, forKey: .mutableContent)?.value
        interruptionLevel = try container.decodeIfGiven(String.self, forKey: .interruptionLevel)
        extras = try container.decodeIfGiven([String: JSONValue].self, forKey: .extras)
        pushType = try container.decodeIfGiven(IOSPushType.self, forKey: .pushType)
        mediaURL = try container.decodeIfGiven(String.self, forKey: .mediaURL)
        relevanceScore = try container.decodeIfGiven(Double.self, forKey: .relevanceScore)
        targetContentID = try container.decodeIfGiven(String.self, forKey: .targetContentID)
        filterCriteria = try container.decodeIfGiven(String.self, forKey: .filterCriteria)
        notificationConfig = try container.decodeIfGiven(JSONValue.self, forKey: .notificationConfig)
        localizations = try container.decodeIfGiven([String: Alert].self, forKey: .localizations)
    }

    /// Whether the app's Notification Service Extension must see the notification first:
    /// asked, or needed for the media or the category's configuration.
    public var needsServiceExtension: Bool { mutableContent == true || mediaURL != nil || notificationConfig != nil }

    /// A flag as JSON or as JPush writes it: true / false, or 1 / 0.
    struct Flag: Decodable {
        var value: Bool

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                value = flag
            } else if let number = try? container.decode(Int.self), number == 0 || number == 1 {
                value = number == 1
            } else {
                throw HeraldError.invalidField(decoder.fieldName, "expected true, false, 1 or 0")
            }
        }
    }

    /// A badge value, or a change to the device's current badge.
    public enum Badge: Sendable, Hashable, Codable {
        case set(Int)
        case change(Int)

        /// The largest N of a "+N" / "-N" change or of a badge given as a string.
        public static let maxInText = 99_999

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int.self) {
                guard number >= 0 else { throw HeraldError.invalidField(decoder.fieldName, "must not be negative") }
                self = .set(number)
                return
            }
            guard let text = try? container.decode(String.self), let badge = Badge(text: text) else {
                throw HeraldError.invalidField(decoder.fieldName, "expected a number, \"N\", \"+N\" or \"-N\"")
            }
            self = badge
        }

        /// JPush's string forms: "+N" / "-N" change the badge, "N" sets it, "" clears it.
        init?(text: String) {
            if text.isEmpty {
                self = .set(0)
                return
            }
            let sign = text.first
            let digits = sign == "+" || sign == "-" ? text.dropFirst() : Substring(text)
            guard !digits.isEmpty, digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                let amount = Int(digits), amount <= Self.maxInText
            else { return nil }
            switch sign {
            case "+": self = .change(amount)
            case "-": self = .change(-amount)
            default: self = .set(amount)
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .set(let value): try container.encode(value)
            case .change(let delta): try container.encode(delta < 0 ? "\(delta)" : "+\(delta)")
            }
        }
    }
}

/// How APNs carries an iOS push.
public enum IOSPushType: String, Sendable, Hashable, Codable, CaseIterable {
    case alert
    case background
    case voip
}
