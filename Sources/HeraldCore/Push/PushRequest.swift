/// The body of `POST /v3/push` and `POST /v3/push/validate`, in the JPush v3 shape.
///
/// Decoding is strict (unknown keys are errors); ``validated()`` checks values and limits
/// and gives the ``Push`` the center sends. The API reads the usual bodies with
/// ``fastRead(_:)`` first; the message stores ``storedJSON``, which decodes back to the same
/// request.
public struct PushRequest: Sendable, Hashable, Codable {
    public var audience: PushAudience
    public var notification: PushNotification?
    public var message: InAppMessage?
    public var options: PushOptions?
    public var cid: String?

    public init(
        audience: PushAudience,
        notification: PushNotification? = nil,
        message: InAppMessage? = nil,
        options: PushOptions? = nil,
        cid: String? = nil
    ) {
        self.audience = audience
        self.notification = notification
        self.message = message
        self.options = options
        self.cid = cid
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case audience, notification, message, options, cid
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        audience = try container.decode(PushAudience.self, forKey: .audience)
        notification = try container.decodeIfPresent(PushNotification.self, forKey: .notification)
        message = try container.decodeIfPresent(InAppMessage.self, forKey: .message)
        options = try container.decodeIfPresent(PushOptions.self, forKey: .options)
        cid = try container.decodeIfPresent(String.self, forKey: .cid)
    }
}

/// Who a push is for: `"all"`, or filters that combine with AND.
public enum PushAudience: Sendable, Hashable, Codable {
    case all
    case filter(AudienceFilter)

    public init(from decoder: any Decoder) throws {
        // An object, the usual audience, is looked for first: asking a decoder for the
        // wrong kind of value costs it an error to build and throw.
        if let object = try? decoder.container(keyedBy: AnyCodingKey.self) {
            self = .filter(try AudienceFilter(StrictKeyedContainer(checking: object, at: decoder.codingPath)))
            return
        }
        guard (try? decoder.singleValueContainer().decode(String.self)) == "all" else {
            throw HeraldError.invalidField(decoder.fieldName, "expected \"all\" or an object")
        }
        self = .all
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .all:
            var container = encoder.singleValueContainer()
            try container.encode("all")
        case .filter(let filter):
            try filter.encode(to: encoder)
        }
    }
}

/// Audience filters; every one given must match (AND). `tag` is OR within itself.
public struct AudienceFilter: Sendable, Hashable, Codable {
    public var registrationID: [String]?
    public var alias: [String]?
    public var tag: [String]?
    public var tagAnd: [String]?
    public var tagNot: [String]?

    public init(
        registrationID: [String]? = nil,
        alias: [String]? = nil,
        tag: [String]? = nil,
        tagAnd: [String]? = nil,
        tagNot: [String]? = nil
    ) {
        self.registrationID = registrationID
        self.alias = alias
        self.tag = tag
        self.tagAnd = tagAnd
        self.tagNot = tagNot
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case registrationID = "registration_id"
        case alias, tag
        case tagAnd = "tag_and"
        case tagNot = "tag_not"
    }

    public init(from decoder: any Decoder) throws {
        try self.init(decoder.strictContainer(keyedBy: CodingKeys.self))
    }

    init(_ container: StrictKeyedContainer<CodingKeys>) throws {
        registrationID = try container.decodeIfPresent([String].self, forKey: .registrationID)
        alias = try container.decodeIfPresent([String].self, forKey: .alias)
        tag = try container.decodeIfPresent([String].self, forKey: .tag)
        tagAnd = try container.decodeIfPresent([String].self, forKey: .tagAnd)
        tagNot = try container.decodeIfPresent([String].self, forKey: .tagNot)
    }
}

/// A notification: a common `alert` and the iOS specifics.
public struct PushNotification: Sendable, Hashable, Codable {
    public var alert: String?
    public var ios: IOSNotification?

    public init(alert: String? = nil, ios: IOSNotification? = nil) {
        self.alert = alert
        self.ios = ios
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case alert, ios }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        alert = try container.decodeIfPresent(String.self, forKey: .alert)
        ios = try container.decodeIfPresent(IOSNotification.self, forKey: .ios)
    }
}

/// An in-app message: delivered over the MQTT connection only, never shown by the system.
public struct InAppMessage: Sendable, Hashable, Codable {
    public var msgContent: String
    public var title: String?
    public var contentType: String?
    public var extras: [String: String]?

    public init(msgContent: String, title: String? = nil, contentType: String? = nil, extras: [String: String]? = nil) {
        self.msgContent = msgContent
        self.title = title
        self.contentType = contentType
        self.extras = extras
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case msgContent = "msg_content"
        case title
        case contentType = "content_type"
        case extras
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        msgContent = try container.decode(String.self, forKey: .msgContent)
        title = try container.decodeIfPresent(String.self, forKey: .title)
        contentType = try container.decodeIfPresent(String.self, forKey: .contentType)
        extras = try container.decodeIfPresent([String: String].self, forKey: .extras)
    }
}

/// How a push is sent.
public struct PushOptions: Sendable, Hashable, Codable {
    /// Seconds a copy may wait for its device: default one day, at most ten; zero means
    /// online devices only.
    public var timeToLive: Int?
    /// The notification's identifier on the device and its apns-collapse-id.
    public var identifier: String?
    /// The identifier of an earlier notification this one replaces.
    public var replace: String?
    /// Send to APNs production (true) or sandbox (false); by default each device's own.
    public var apnsProduction: Bool?
    /// APNs priority: 10 (immediate), 5 (power-considerate) or 1.
    public var priority: Int?

    public init(
        timeToLive: Int? = nil,
        identifier: String? = nil,
        replace: String? = nil,
        apnsProduction: Bool? = nil,
        priority: Int? = nil
    ) {
        self.timeToLive = timeToLive
        self.identifier = identifier
        self.replace = replace
        self.apnsProduction = apnsProduction
        self.priority = priority
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case timeToLive = "time_to_live"
        case identifier, replace
        case apnsProduction = "apns_production"
        case priority
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        timeToLive = try container.decodeIfPresent(Int.self, forKey: .timeToLive)
        identifier = try container.decodeIfPresent(String.self, forKey: .identifier)
        replace = try container.decodeIfPresent(String.self, forKey: .replace)
        apnsProduction = try container.decodeIfPresent(Bool.self, forKey: .apnsProduction)
        priority = try container.decodeIfPresent(Int.self, forKey: .priority)
    }
}
