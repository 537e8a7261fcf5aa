/// `notification.ios`: what APNs shows (or, for background and VoIP pushes, delivers).
public struct IOSNotification: Sendable, Hashable, Codable {
    /// A string, or title / subtitle / body.
    public var alert: Alert?
    public var sound: String?
    /// A number, or "+N" / "-N" to change the device's badge by N.
    public var badge: Badge?
    public var threadID: String?
    public var category: String?
    public var contentAvailable: Bool?
    public var mutableContent: Bool?
    /// passive, active, time-sensitive or critical.
    public var interruptionLevel: String?
    public var extras: [String: String]?
    /// alert (default), background (silent) or voip (to the VoIP token).
    public var pushType: IOSPushType?

    public init(
        alert: Alert? = nil,
        sound: String? = nil,
        badge: Badge? = nil,
        threadID: String? = nil,
        category: String? = nil,
        contentAvailable: Bool? = nil,
        mutableContent: Bool? = nil,
        interruptionLevel: String? = nil,
        extras: [String: String]? = nil,
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
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        alert = try container.decodeIfPresent(Alert.self, forKey: .alert)
        sound = try container.decodeIfPresent(String.self, forKey: .sound)
        badge = try container.decodeIfPresent(Badge.self, forKey: .badge)
        threadID = try container.decodeIfPresent(String.self, forKey: .threadID)
        category = try container.decodeIfPresent(String.self, forKey: .category)
        contentAvailable = try container.decodeIfPresent(Bool.self, forKey: .contentAvailable)
        mutableContent = try container.decodeIfPresent(Bool.self, forKey: .mutableContent)
        interruptionLevel = try container.decodeIfPresent(String.self, forKey: .interruptionLevel)
        extras = try container.decodeIfPresent([String: String].self, forKey: .extras)
        pushType = try container.decodeIfPresent(IOSPushType.self, forKey: .pushType)
    }

    /// The alert text, or its parts.
    public enum Alert: Sendable, Hashable, Codable {
        case text(String)
        case parts(title: String?, subtitle: String?, body: String?)

        enum CodingKeys: String, CodingKey, CaseIterable { case title, subtitle, body }

        public init(from decoder: any Decoder) throws {
            if let text = try? decoder.singleValueContainer().decode(String.self) {
                self = .text(text)
                return
            }
            guard let object = try? decoder.container(keyedBy: AnyCodingKey.self) else {
                throw HeraldError.invalidField(decoder.fieldName, "expected a string or an object with title, subtitle, body")
            }
            let container = try StrictKeyedContainer<CodingKeys>(checking: object, at: decoder.codingPath)
            self = .parts(
                title: try container.decodeIfPresent(String.self, forKey: .title),
                subtitle: try container.decodeIfPresent(String.self, forKey: .subtitle),
                body: try container.decodeIfPresent(String.self, forKey: .body)
            )
        }

        public func encode(to encoder: any Encoder) throws {
            switch self {
            case .text(let text):
                var container = encoder.singleValueContainer()
                try container.encode(text)
            case .parts(let title, let subtitle, let body):
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encodeIfPresent(title, forKey: .title)
                try container.encodeIfPresent(subtitle, forKey: .subtitle)
                try container.encodeIfPresent(body, forKey: .body)
            }
        }
    }

    /// A badge value, or a change to the device's current badge.
    public enum Badge: Sendable, Hashable, Codable {
        case set(Int)
        case change(Int)

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int.self) {
                guard number >= 0 else { throw HeraldError.invalidField(decoder.fieldName, "must not be negative") }
                self = .set(number)
                return
            }
            guard let text = try? container.decode(String.self), let sign = text.first, sign == "+" || sign == "-",
                let amount = Int(text.dropFirst()), amount >= 0, amount <= 99_999
            else {
                throw HeraldError.invalidField(decoder.fieldName, "expected a number or \"+N\" / \"-N\"")
            }
            self = .change(sign == "+" ? amount : -amount)
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
