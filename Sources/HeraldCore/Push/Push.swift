/// A validated push: what the center resolves and sends.
public struct Push: Sendable, Hashable {
    public var audience: ValidatedAudience
    /// The notification, if the push has one.
    public var notification: PushNotification?
    /// The in-app message, if the push has one.
    public var message: InAppMessage?
    /// Seconds a copy may wait for its device; zero: online devices only.
    public var timeToLive: Int
    /// The identifier on the device; nil means the message id.
    public var identifier: String?
    /// The identifier this push replaces (then also its own identifier).
    public var replace: String?
    public var apnsProduction: Bool?
    public var priority: Int?
    public var cid: String?

    /// How APNs carries it: as asked, else `background` for a notification that only
    /// wakes the app (content-available with no alert, sound or badge), else `alert`.
    /// Apple requires such a push to go as a background push at priority 5.
    public var pushType: IOSPushType {
        if let asked = notification?.ios?.pushType { return asked }
        return notification?.isContentAvailableOnly == true ? .background : .alert
    }

    /// The identifier on the device for a message id.
    public func identifier(msgID: String) -> String { replace ?? identifier ?? msgID }
}

extension PushNotification {
    /// Whether the notification only wakes the app: content-available and nothing to show
    /// or sound.
    public var isContentAvailableOnly: Bool {
        guard let ios, ios.contentAvailable == true else { return false }
        return alert == nil && ios.alert == nil && ios.sound == nil && ios.badge == nil
    }
}

/// Validated audience: `all`, or normalised filters (deduplicated, never empty lists).
public struct ValidatedAudience: Sendable, Hashable {
    public var all: Bool
    public var registrationIDs: [String]?
    public var aliases: [String]?
    public var tags: [String]?
    public var tagsAnd: [String]?
    public var tagsNot: [String]?

    public static let everyone = ValidatedAudience(all: true)

    public init(
        all: Bool = false,
        registrationIDs: [String]? = nil,
        aliases: [String]? = nil,
        tags: [String]? = nil,
        tagsAnd: [String]? = nil,
        tagsNot: [String]? = nil
    ) {
        self.all = all
        self.registrationIDs = registrationIDs
        self.aliases = aliases
        self.tags = tags
        self.tagsAnd = tagsAnd
        self.tagsNot = tagsNot
    }
}

extension PushLimits {
    /// Registration ids or aliases in an audience.
    public static let maxAudienceIDs = 1000
    /// Tags in each of tag, tag_and, tag_not.
    public static let maxAudienceTags = 20
    /// Default time to live: one day.
    public static let defaultTimeToLive = 86_400
    /// Longest time to live: ten days.
    public static let maxTimeToLive = 864_000
    /// Bytes in an identifier (it is also the apns-collapse-id).
    public static let maxIdentifierBytes = 64
    /// Bytes in a cid.
    public static let maxCIDBytes = 64
    /// Bytes in an in-app message's content.
    public static let maxMessageContentBytes = 4096
    /// Bytes in the APNs payload of an alert or background push (Apple's limit).
    public static let maxAPNsPayloadBytes = 4096
    /// Bytes in the APNs payload of a VoIP push (Apple's limit).
    public static let maxAPNsVoIPPayloadBytes = 5120
}

/// Limits of the push API.
public enum PushLimits {}
