/// JPush's `live_activity`: an iOS Live Activity start, update or end, sent to APNs as a
/// `liveactivity` push (``LiveActivityPush``). Kept as given, for the stored request.
public struct LiveActivity: CheckedJSONObject {
    public let fields: [String: JSONValue]

    public init(fields: [String: JSONValue], at path: String = "live_activity") throws(HeraldError) {
        try Self.fieldKinds.check(fields, at: path)
        if case .object(let ios) = fields["ios"], ios["event"]?.string == "start" {
            if ios["attributes-type"] == nil {
                throw .invalidField("\(path).ios.attributes-type", "is required to start a Live Activity")
            }
            if ios["attributes"] == nil {
                throw .invalidField("\(path).ios.attributes", "is required to start a Live Activity")
            }
        }
        if case .object(let ios) = fields["ios"], case .int(let priority) = ios["apns-priority"], priority != 5, priority != 10 {
            throw .invalidField("\(path).ios.apns-priority", "must be 5 or 10")
        }
        self.fields = fields
    }

    public static var knownFields: [String]? { Array(fieldKinds.kinds.keys) }

    static let fieldKinds = JSONFields(
        [
            "ios": .nested(
                JSONFields(
                    [
                        "event": .oneOf(["start", "update", "end"]),
                        "attributes-type": .string(maxBytes: LiveActivityPush.maxNameBytes),
                        "attributes": .object,
                        "content-state": .object,
                        "alert": .nested(JSONFields(["title": .string(), "body": .string(), "sound": .string()])),
                        "dismissal-date": .int(0...Int64.max),
                        "stale-date": .int(0...Int64.max),
                        "relevance-score": .int(0...100),
                        "apns-priority": .int(5...10),
                    ],
                    required: ["event", "content-state"]
                )
            )
        ],
        required: ["ios"]
    )

    /// The typed push, once the request's fields are checked.
    var validated: LiveActivityPush {
        guard case .object(let ios) = fields["ios"] else { preconditionFailure("checked by init") }
        func object(_ key: String) -> [String: JSONValue]? {
            if case .object(let value) = ios[key] { return value }
            return nil
        }
        func int(_ key: String) -> Int64? {
            if case .int(let value) = ios[key] { return value }
            return nil
        }
        return LiveActivityPush(
            event: LiveActivityPush.Event(rawValue: ios["event"]?.string ?? "") ?? .update,
            attributesType: ios["attributes-type"]?.string,
            attributes: object("attributes"),
            contentState: object("content-state") ?? [:],
            alert: object("alert"),
            staleDate: int("stale-date"),
            dismissalDate: int("dismissal-date"),
            relevanceScore: int("relevance-score"),
            priority: int("apns-priority").map(Int.init)
        )
    }
}

/// A validated Live Activity push: what goes to APNs with push type `liveactivity`, topic
/// `<bundle id>.push-type.liveactivity`. A start goes to the devices of the audience that
/// registered a push-to-start token for ``attributesType``; an update or end goes to the
/// tokens of the activity named by `audience.live_activity_id`.
public struct LiveActivityPush: Sendable, Hashable {
    public enum Event: String, Sendable, Hashable {
        case start, update, end
    }

    public var event: Event
    public var attributesType: String?
    public var attributes: [String: JSONValue]?
    public var contentState: [String: JSONValue]
    /// `title`, `body`, `sound`, as Apple's Live Activity alert has them.
    public var alert: [String: JSONValue]?
    /// Epoch seconds.
    public var staleDate: Int64?
    /// Epoch seconds; for an end.
    public var dismissalDate: Int64?
    public var relevanceScore: Int64?
    /// `apns-priority` as asked (5 or 10); nil sends 10.
    public var priority: Int?

    /// Bytes in an attributes type or a Live Activity id.
    public static let maxNameBytes = 128
}

/// Which ActivityKit tokens of a device a Live Activity push goes to (the audience's
/// devices must hold one).
public enum LiveActivityTarget: Sendable, Hashable {
    /// The push-to-start token registered for this attributes type.
    case pushToStart(attributesType: String)
    /// The update token registered for this activity.
    case activity(id: String)

    /// The kind stored in `live_activity_tokens.kind`, and the key beside it.
    public var kind: String {
        switch self {
        case .pushToStart: "start"
        case .activity: "update"
        }
    }

    public var key: String {
        switch self {
        case .pushToStart(let attributesType): attributesType
        case .activity(let id): id
        }
    }
}
