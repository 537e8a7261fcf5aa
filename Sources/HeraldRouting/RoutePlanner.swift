import HeraldCore

/// Where a copy of a message goes: the rules the message center follows, in one place and
/// without I/O (issue #32). The center reads the facts, asks here, and only executes what
/// it is told: a send over this node's MQTT connection, a route to the peer that holds the
/// device, an APNs request with its environment, the inbox, or nothing (expired).
///
/// A copy is planned in two steps. ``firstHop(_:_:connectedHere:peers:)`` decides before
/// anything is sent: over the connection, to a peer (the node that holds the device, if a
/// live one does: a lookup the center makes in one statement for the batch), or straight
/// to the fallback. ``fallback(_:_:acknowledged:)`` decides once the connection answered
/// (or wasn't tried): delivered, APNs, the inbox, or expired.
public enum RoutePlanner {
    /// The first step of a copy.
    public enum FirstHop: Sendable, Hashable {
        /// Over the device's MQTT connection on this node.
        case connection
        /// To the node that holds the device, if a live peer does; else ``fallback``.
        case peer
        /// Not over a connection: APNs, the inbox, or nothing.
        case fallback
        /// Not routed now: the app's quiet hours hold it, or its daily cap dropped it (the
        /// statement that fanned it out decided, and recorded it).
        case withheld
    }

    /// Where a copy ends up after its connection (if any) answered.
    public enum Route: Sendable, Hashable {
        /// Acknowledged over the connection.
        case delivered
        /// To APNs, in this environment.
        case apns(APNsRoute)
        /// To Firebase Cloud Messaging (an Android device with an FCM token).
        case fcm
        /// Left in the device's inbox for its next connection.
        case inbox
        /// Not stored (a time to live of 0, or a Live Activity) and not delivered.
        case expire

        /// The name of the ``DeliveryChannel`` that carries the route, for those one does.
        public var channel: String? {
            switch self {
            case .apns: "apns"
            case .fcm: "fcm"
            case .delivered, .inbox, .expire: nil
            }
        }
    }

    /// The rule under both steps: a copy may travel over an MQTT connection (here or on a
    /// peer) unless it is a Live Activity (APNs only) or a notification for a device whose
    /// app is in the background (the system shows it: APNs, from this node).
    public static func mayTravelOverConnection(_ message: MessageFacts, _ device: DeviceFacts) -> Bool {
        mayTravelOverConnection(message, inBackground: device.inBackground)
    }

    /// The same, for a device whose app is (or is not) in the background: the accepting
    /// statement takes both answers and picks one per device in SQL.
    public static func mayTravelOverConnection(_ message: MessageFacts, inBackground: Bool) -> Bool {
        !message.isLiveActivity && !(message.hasNotification && inBackground)
    }

    /// `connectedHere`: the device has a connection on this node (asked only when it
    /// matters). `peers`: other live nodes exist and the copy may hop again (fewer than
    /// ``maxHops`` so far).
    public static func firstHop(
        _ message: MessageFacts,
        _ device: DeviceFacts,
        connectedHere: @autoclosure () -> Bool,
        peers: Bool
    ) -> FirstHop {
        if device.isWithheld { return .withheld }
        guard mayTravelOverConnection(message, device) else { return .fallback }
        if connectedHere() { return .connection }
        return peers ? .peer : .fallback
    }

    /// How many nodes a copy is routed through, at most, before it falls back where it is
    /// (a device that keeps moving).
    public static let maxHops = 3

    /// `acknowledged`: the device acknowledged it over its connection.
    public static func fallback(_ message: MessageFacts, _ device: DeviceFacts, acknowledged: Bool) -> Route {
        if acknowledged { return .delivered }
        if message.reachesApple, canUseAPNs(message, device) { return .apns(APNsRoute(message, device)) }
        if canUseFCM(message, device) { return .fcm }
        return message.stored ? .inbox : .expire
    }

    /// Whether APNs can carry the copy: an Apple device with a valid token for the push (its
    /// VoIP token for a VoIP push or the one beside a notification). A Live Activity push
    /// goes to its ActivityKit token, read when it is sent.
    public static func canUseAPNs(_ message: MessageFacts, _ device: DeviceFacts) -> Bool {
        if message.isLiveActivity { return device.platform.usesAPNs }
        guard device.platform.usesAPNs, device.tokenValid else { return false }
        if message.hasVoIPCompanion, device.hasVoIPToken { return true }
        return message.pushType == .voip ? device.hasVoIPToken : device.hasAPNsToken
    }

    /// Whether FCM can carry the copy: something for Android (a notification for it, or an
    /// in-app message, sent as FCM data) to an Android device with an FCM token. Never a
    /// Live Activity.
    public static func canUseFCM(_ message: MessageFacts, _ device: DeviceFacts) -> Bool {
        message.reachesAndroid && device.platform == .android && device.hasFCMToken
    }

    /// Where a recall command goes to a device without a connection: a silent push to its
    /// APNs token (in the environment the recall's push asks for, else the device's), or an
    /// FCM data message to an Android device's token; nil when neither can reach it.
    public static func recallRoute(_ message: MessageFacts, _ device: DeviceFacts) -> Route? {
        if device.platform.usesAPNs, device.tokenValid, device.hasAPNsToken { return .apns(APNsRoute(message, device)) }
        if device.platform == .android, device.hasFCMToken { return .fcm }
        return nil
    }
}

/// The APNs environment a copy goes to: the one its push asks for (`apns_production`),
/// else its device's own (production when the device didn't say).
public struct APNsRoute: Sendable, Hashable {
    public var environment: APNsEnvironment
    /// The push asked for an environment that is not its device's own: APNs' "bad device
    /// token" then says the token isn't of that environment, not that it is dead (JPush's
    /// clients send `apns_production: false` by default; a production token must survive).
    public var isForcedElsewhere: Bool

    public init(apnsProduction: Bool?, deviceEnvironment: APNsEnvironment?) {
        let own = deviceEnvironment ?? .production
        let asked = apnsProduction.map { $0 ? APNsEnvironment.production : .sandbox }
        environment = asked ?? own
        isForcedElsewhere = asked.map { $0 != own } ?? false
    }

    public init(_ message: MessageFacts, _ device: DeviceFacts) {
        self.init(apnsProduction: message.apnsProduction, deviceEnvironment: device.apnsEnvironment)
    }
}

/// What routing reads of a message, once per message.
public struct MessageFacts: Sendable, Hashable {
    public var hasNotification: Bool
    /// Whether Apple devices have something of it to get from APNs (a notification for
    /// them, or a Live Activity update).
    public var reachesApple: Bool
    public var isLiveActivity: Bool
    /// Whether Android devices have something of it to get from FCM: a notification for
    /// them (its Android part or `alert`), or an in-app message.
    public var reachesAndroid: Bool
    /// Kept in the inboxes (a time to live above 0; never a Live Activity).
    public var stored: Bool
    public var pushType: IOSPushType
    public var hasVoIPCompanion: Bool
    public var apnsProduction: Bool?

    public init(
        hasNotification: Bool,
        reachesApple: Bool,
        isLiveActivity: Bool,
        reachesAndroid: Bool = false,
        stored: Bool,
        pushType: IOSPushType = .alert,
        hasVoIPCompanion: Bool = false,
        apnsProduction: Bool? = nil
    ) {
        self.hasNotification = hasNotification
        self.reachesApple = reachesApple
        self.isLiveActivity = isLiveActivity
        self.reachesAndroid = reachesAndroid
        self.stored = stored
        self.pushType = pushType
        self.hasVoIPCompanion = hasVoIPCompanion
        self.apnsProduction = apnsProduction
    }

    public init(_ push: Push) {
        let isLiveActivity = push.liveActivity != nil
        self.init(
            hasNotification: push.notification != nil,
            reachesApple: push.notification?.reachesApple == true || isLiveActivity,
            isLiveActivity: isLiveActivity,
            reachesAndroid: !isLiveActivity
                && (push.message != nil || push.notification.map { $0.alert != nil || $0.android != nil } == true),
            stored: push.timeToLive > 0 && !isLiveActivity,
            pushType: push.pushType,
            hasVoIPCompanion: push.hasVoIPCompanion,
            apnsProduction: push.apnsProduction
        )
    }
}

/// What routing reads of a copy's device.
public struct DeviceFacts: Sendable, Hashable {
    public var platform: Platform
    public var hasAPNsToken: Bool
    public var hasVoIPToken: Bool
    /// It registered a Firebase Cloud Messaging token (Android).
    public var hasFCMToken: Bool
    /// False once APNs said its token is dead.
    public var tokenValid: Bool
    public var apnsEnvironment: APNsEnvironment?
    /// Its app is in the background (the SDK said so over its connection).
    public var inBackground: Bool
    /// The app's quiet hours hold the copy, or its daily cap dropped it.
    public var isWithheld: Bool

    public init(
        platform: Platform,
        hasAPNsToken: Bool = false,
        hasVoIPToken: Bool = false,
        hasFCMToken: Bool = false,
        tokenValid: Bool = true,
        apnsEnvironment: APNsEnvironment? = nil,
        inBackground: Bool = false,
        isWithheld: Bool = false
    ) {
        self.isWithheld = isWithheld
        self.platform = platform
        self.hasAPNsToken = hasAPNsToken
        self.hasVoIPToken = hasVoIPToken
        self.hasFCMToken = hasFCMToken
        self.tokenValid = tokenValid
        self.apnsEnvironment = apnsEnvironment
        self.inBackground = inBackground
    }
}
