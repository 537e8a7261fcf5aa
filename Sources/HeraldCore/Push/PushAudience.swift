/// Who a push is for: `"all"`, or filters that combine with AND.
public enum PushAudience: Sendable, Hashable, Codable {
    case all
    case filter(AudienceFilter)

    public init(from decoder: any Decoder) throws {
        // An object, the usual audience, is looked for first: asking a decoder for the
        // wrong kind of value costs it an error to build and throw. An unknown key is
        // refused even in a JPush body: ignoring a filter would widen who gets the push.
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

/// Audience filters; every one given must match (AND). `tag` is OR within itself. An empty
/// list is not set (as in JPush). `segment`, `abtest`, `live_activity_id` and `file` are
/// JPush's, read so that a request naming them is told Herald doesn't support them.
public struct AudienceFilter: Sendable, Hashable, Codable {
    public var registrationID: [String]?
    public var alias: [String]?
    public var tag: [String]?
    public var tagAnd: [String]?
    public var tagNot: [String]?
    public var segment: [String]?
    public var abtest: [String]?
    public var liveActivityID: String?
    public var file: FreeJSONObject?

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
        case segment, abtest
        case liveActivityID = "live_activity_id"
        case file
    }

    public init(from decoder: any Decoder) throws {
        try self.init(decoder.strictContainer(keyedBy: CodingKeys.self))
    }

    init(_ container: StrictKeyedContainer<CodingKeys>) throws {
        registrationID = try container.decodeIfGiven([String].self, forKey: .registrationID)
        alias = try container.decodeIfGiven([String].self, forKey: .alias)
        tag = try container.decodeIfGiven([String].self, forKey: .tag)
        tagAnd = try container.decodeIfGiven([String].self, forKey: .tagAnd)
        tagNot = try container.decodeIfGiven([String].self, forKey: .tagNot)
        segment = try container.decodeIfGiven([String].self, forKey: .segment)
        abtest = try container.decodeIfGiven([String].self, forKey: .abtest)
        liveActivityID = try container.decodeIfGiven(String.self, forKey: .liveActivityID)
        file = try container.decodeIfGiven(FreeJSONObject.self, forKey: .file)
    }
}
