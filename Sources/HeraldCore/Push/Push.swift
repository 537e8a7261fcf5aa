/// A validated push: what the center resolves and sends.
public struct Push: Sendable, Hashable {
    public var audience: ValidatedAudience
    /// The notification, if the push has one.
    /// What devices get of the request's notification: nil when it has only parts for
    /// channels Herald doesn't have (``deliversNothing`` when the push has nothing else).
    public var notification: PushNotification?
    /// The in-app message, if the push has one.
    public var message: InAppMessage?
    /// The Live Activity start, update or end, if the push is one (then it has neither
    /// notification nor message, and goes to APNs only).
    public var liveActivity: LiveActivityPush?
    /// The SMS sent to the devices it hasn't reached in time, if the push asks for one.
    public var sms: SMSFallback?
    /// Seconds a copy may wait for its device; zero: online devices only.
    public var timeToLive: Int
    /// The identifier on the device; nil means the message id.
    public var identifier: String?
    /// The identifier this push replaces (then also its own identifier).
    public var replace: String?
    public var apnsProduction: Bool?
    public var priority: Int?
    public var cid: String?
    /// The APNs collapse id when it isn't the identifier (JPush's `apns_collapse_id` beside
    /// a replace).
    public var apnsCollapseID: String?
    /// JPush's `sendno`, echoed in the answer.
    public var sendno: Int64?
    /// JPush's `override_msg_id`: the API looks up that push's identifier and makes it
    /// ``replace`` (``PushRequest/overriding(identifier:)``).
    public var overrideMsgID: String?
    /// JPush's `big_push_duration` when above 0: the audience is fanned out evenly over
    /// this many minutes instead of at once (``PushPath/isSpread``).
    public var spreadMinutes: Int?
    /// JPush's `classification`: 0 (or nil) operations, 1 system. An app's
    /// ``DeliveryControls`` hold back operations pushes only.
    public var classification: Int?
    /// Set by the API when the app's ``DeliveryControls`` apply to this push: it is fanned
    /// out batch by batch, where they are checked per device. Not part of the request.
    public var isDeliveryControlled = false
    /// JPush's per-push callback: where to report what became of the push's copies.
    public var callback: PushCallback?
    /// What the request asked that Herald accepted without applying, one line per field,
    /// each starting with the field's name; the answer carries them.
    public var warnings: [String] = []
    /// Where the push came from when not the API (`console`): stored with its message, so
    /// the console's history can tell. Never read from a request's JSON.
    public var source: String?

    /// Nothing of the push reaches a device: its notification has only parts for channels
    /// Herald doesn't have, and it has no message or Live Activity. It is accepted and
    /// stored (JPush accepts it), its audience matching no device.
    public var deliversNothing: Bool { notification == nil && message == nil && liveActivity == nil }

    /// How APNs carries it: as asked, else `voip` for a notification that is only a VoIP
    /// payload, else `background` for a notification that only wakes the app
    /// (content-available with no alert, sound or badge), else `alert`. Apple requires such
    /// a push to go as a background push at priority 5.
    public var pushType: IOSPushType {
        guard let notification else { return .alert }
        if let asked = notification.ios?.pushType { return asked }
        if notification.isVoIPOnly { return .voip }
        return notification.isContentAvailableOnly ? .background : .alert
    }

    /// A VoIP push sent beside the APNs notification: the push has a VoIP payload and
    /// something else to show.
    public var hasVoIPCompanion: Bool {
        guard let notification, notification.voip != nil else { return false }
        return !notification.isVoIPOnly
    }

    /// Whether the push only sends a category's configuration ahead (a silent notification
    /// with `notification_config` and nothing else): devices get it over the connection as
    /// a `category_config` message, over APNs as a background push.
    public var isCategoryDelivery: Bool {
        guard message == nil, let notification, notification.isContentAvailableOnly, let ios = notification.ios else { return false }
        return ios.notificationConfig != nil && ios.extras == nil && notification.android == nil && notification.voip == nil
    }

    /// The identifier on the device for a message id.
    public func identifier(msgID: String) -> String { replace ?? identifier ?? msgID }

    /// The apns-collapse-id of a message whose identifier is `identifier`.
    public func collapseID(identifier: String) -> String { apnsCollapseID ?? identifier }
}

extension PushNotification {
    /// Whether the notification only wakes the app: content-available and nothing to show
    /// or sound.
    public var isContentAvailableOnly: Bool {
        guard let ios, ios.contentAvailable == true else { return false }
        return alert == nil && ios.alert == nil && ios.sound == nil && ios.badge == nil
    }

    /// Whether Apple devices get only the VoIP payload: no alert and no iOS part.
    public var isVoIPOnly: Bool { voip != nil && alert == nil && ios == nil }
}

/// The devices of one time zone: those whose reported zone is `zone`, a device that
/// reported none counting as in `fallback` (the schedule's zone).
public struct AudienceTimeZone: Sendable, Hashable {
    public var zone: String
    public var fallback: String

    public init(zone: String, fallback: String) {
        self.zone = zone
        self.fallback = fallback
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
    /// The devices' platforms (``Platform`` raw values, sorted); nil for every platform.
    public var platforms: [String]?
    /// Only the devices in one time zone: set on the pushes a local-time schedule makes,
    /// never by a request. Nil for every other push.
    public var timeZone: AudienceTimeZone?
    /// Only the devices holding the ActivityKit token a Live Activity push goes to: set for
    /// every Live Activity push, nil for every other.
    public var liveActivity: LiveActivityTarget?

    public static let everyone = ValidatedAudience(all: true)

    public init(
        all: Bool = false,
        registrationIDs: [String]? = nil,
        aliases: [String]? = nil,
        tags: [String]? = nil,
        tagsAnd: [String]? = nil,
        tagsNot: [String]? = nil,
        platforms: [String]? = nil
    ) {
        self.all = all
        self.registrationIDs = registrationIDs
        self.aliases = aliases
        self.tags = tags
        self.tagsAnd = tagsAnd
        self.tagsNot = tagsNot
        self.platforms = platforms
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
    /// Minutes a push may be spread over (`big_push_duration`).
    public static let maxBigPushDuration = 1400
    /// Bytes in an identifier (it is also the apns-collapse-id).
    public static let maxIdentifierBytes = 64
    /// Bytes in a cid.
    public static let maxCIDBytes = 64
    /// Bytes in an in-app message's content.
    public static let maxMessageContentBytes = 4096
    /// Bytes in the APNs payload of an alert or background push (Apple's limit).
    public static let maxAPNsPayloadBytes = 4096
    /// Bytes in a Live Activity id (`audience.live_activity_id`).
    public static let maxLiveActivityIDBytes = LiveActivityPush.maxNameBytes
    /// Bytes in the APNs payload of a VoIP push (Apple's limit).
    public static let maxAPNsVoIPPayloadBytes = 5120
}

/// Limits of the push API.
public enum PushLimits {}
