extension IOSNotification {
    /// The alert text, or its parts.
    public enum Alert: Sendable, Hashable, Codable {
        case text(String)
        case parts(IOSAlert)

        public init(from decoder: any Decoder) throws {
            if let text = try? decoder.singleValueContainer().decode(String.self) {
                self = .text(text)
                return
            }
            guard let object = try? decoder.container(keyedBy: AnyCodingKey.self) else {
                throw HeraldError.invalidField(decoder.fieldName, "expected a string or an object with title, subtitle, body")
            }
            self = .parts(try IOSAlert(StrictKeyedContainer(checking: object, at: decoder.codingPath, unknownFields: decoder.unknownFields)))
        }

        public func encode(to encoder: any Encoder) throws {
            switch self {
            case .text(let text):
                var container = encoder.singleValueContainer()
                try container.encode(text)
            case .parts(let parts):
                try parts.encode(to: encoder)
            }
        }
    }

    /// A sound's name, or the critical-alert dictionary (`{"critical": 1, "name": "…",
    /// "volume": 0.5}`), which plays even when the device is muted.
    public enum Sound: Sendable, Hashable, Codable {
        case named(String)
        case critical(CriticalSound)

        public init(from decoder: any Decoder) throws {
            if let name = try? decoder.singleValueContainer().decode(String.self) {
                self = .named(name)
                return
            }
            guard let object = try? decoder.container(keyedBy: AnyCodingKey.self) else {
                throw HeraldError.invalidField(decoder.fieldName, "expected a string or an object with critical, name, volume")
            }
            self = .critical(
                try CriticalSound(
                    StrictKeyedContainer(checking: object, at: decoder.codingPath, unknownFields: decoder.unknownFields),
                    field: decoder.fieldName
                )
            )
        }

        public func encode(to encoder: any Encoder) throws {
            switch self {
            case .named(let name):
                var container = encoder.singleValueContainer()
                try container.encode(name)
            case .critical(let sound):
                try sound.encode(to: encoder)
            }
        }
    }
}

/// An alert in parts, with Apple's keys: the text, or the keys of localized strings in
/// the app and their arguments.
public struct IOSAlert: Sendable, Hashable, Codable {
    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var titleLocKey: String?
    public var titleLocArgs: [String]?
    public var subtitleLocKey: String?
    public var subtitleLocArgs: [String]?
    public var locKey: String?
    public var locArgs: [String]?
    public var launchImage: String?
    public var actionLocKey: String?

    public init(title: String? = nil, subtitle: String? = nil, body: String? = nil) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case title, subtitle, body
        case titleLocKey = "title-loc-key"
        case titleLocArgs = "title-loc-args"
        case subtitleLocKey = "subtitle-loc-key"
        case subtitleLocArgs = "subtitle-loc-args"
        case locKey = "loc-key"
        case locArgs = "loc-args"
        case launchImage = "launch-image"
        case actionLocKey = "action-loc-key"
    }

    public init(from decoder: any Decoder) throws {
        try self.init(decoder.strictContainer(keyedBy: CodingKeys.self))
    }

    init(_ container: StrictKeyedContainer<CodingKeys>) throws {
        title = try container.decodeIfGiven(String.self, forKey: .title)
        subtitle = try container.decodeIfGiven(String.self, forKey: .subtitle)
        body = try container.decodeIfGiven(String.self, forKey: .body)
        titleLocKey = try container.decodeIfGiven(String.self, forKey: .titleLocKey)
        titleLocArgs = try container.decodeIfGiven([String].self, forKey: .titleLocArgs)
        subtitleLocKey = try container.decodeIfGiven(String.self, forKey: .subtitleLocKey)
        subtitleLocArgs = try container.decodeIfGiven([String].self, forKey: .subtitleLocArgs)
        locKey = try container.decodeIfGiven(String.self, forKey: .locKey)
        locArgs = try container.decodeIfGiven([String].self, forKey: .locArgs)
        launchImage = try container.decodeIfGiven(String.self, forKey: .launchImage)
        actionLocKey = try container.decodeIfGiven(String.self, forKey: .actionLocKey)
    }

    /// Every field but title, subtitle and body, by its APNs key, in key order.
    var localization: [(key: String, value: LocalizationValue)] {
        var fields: [(String, LocalizationValue)] = []
        if let actionLocKey { fields.append(("action-loc-key", .text(actionLocKey))) }
        if let launchImage { fields.append(("launch-image", .text(launchImage))) }
        if let locArgs { fields.append(("loc-args", .list(locArgs))) }
        if let locKey { fields.append(("loc-key", .text(locKey))) }
        if let subtitleLocArgs { fields.append(("subtitle-loc-args", .list(subtitleLocArgs))) }
        if let subtitleLocKey { fields.append(("subtitle-loc-key", .text(subtitleLocKey))) }
        if let titleLocArgs { fields.append(("title-loc-args", .list(titleLocArgs))) }
        if let titleLocKey { fields.append(("title-loc-key", .text(titleLocKey))) }
        return fields
    }

    enum LocalizationValue {
        case text(String)
        case list([String])

        var bytes: Int {
            switch self {
            case .text(let text): text.utf8.count
            case .list(let values): values.reduce(2 * values.count) { $0 + $1.utf8.count }
            }
        }
    }
}

/// Apple's critical-alert sound: `critical` 1 plays it even when the device is muted (the
/// app needs Apple's entitlement), at `volume` from 0 to 1.
public struct CriticalSound: Sendable, Hashable, Encodable {
    public var critical: Int
    public var name: String?
    public var volume: Double?

    public init(critical: Int = 1, name: String? = nil, volume: Double? = nil) {
        self.critical = critical
        self.name = name
        self.volume = volume
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case critical, name, volume }

    init(_ container: StrictKeyedContainer<CodingKeys>, field: String) throws {
        guard let critical = try? container.decodeIfGiven(Int.self, forKey: .critical) ?? 1, critical == 0 || critical == 1 else {
            throw HeraldError.invalidField("\(field).critical", "must be 1 (critical) or 0")
        }
        self.critical = critical
        name = try container.decodeIfGiven(String.self, forKey: .name)
        volume = try container.decodeIfGiven(Double.self, forKey: .volume)
        if let volume, !(0...1).contains(volume) {
            throw HeraldError.invalidField("\(field).volume", "must be 0 to 1")
        }
    }
}
