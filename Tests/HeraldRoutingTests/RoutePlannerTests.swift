import Foundation
import HeraldCore
import HeraldRouting
import Testing

/// The route planner's rules, one row each: the facts in, the route out.
@Suite struct RoutePlannerTests {
    // Messages.
    static let notification = MessageFacts(hasNotification: true, reachesApple: true, isLiveActivity: false, stored: true)
    static let notificationNotStored = MessageFacts(hasNotification: true, reachesApple: true, isLiveActivity: false, stored: false)
    static let inAppOnly = MessageFacts(hasNotification: false, reachesApple: false, isLiveActivity: false, stored: true)
    static let androidOnly = MessageFacts(hasNotification: true, reachesApple: false, isLiveActivity: false, stored: true)
    static let liveActivity = MessageFacts(hasNotification: false, reachesApple: true, isLiveActivity: true, stored: false)
    static let voip = MessageFacts(hasNotification: true, reachesApple: true, isLiveActivity: false, stored: true, pushType: .voip)
    static let withVoIPBeside = MessageFacts(
        hasNotification: true,
        reachesApple: true,
        isLiveActivity: false,
        stored: true,
        hasVoIPCompanion: true
    )
    static let forcedSandbox = MessageFacts(
        hasNotification: true,
        reachesApple: true,
        isLiveActivity: false,
        stored: true,
        apnsProduction: false
    )
    // Devices.
    static let iPhone = DeviceFacts(platform: .ios, hasAPNsToken: true, apnsEnvironment: .production)
    static let iPhoneInBackground = DeviceFacts(platform: .ios, hasAPNsToken: true, apnsEnvironment: .production, inBackground: true)
    static let iPhoneDeadToken = DeviceFacts(platform: .ios, hasAPNsToken: true, tokenValid: false)
    static let iPhoneNoToken = DeviceFacts(platform: .ios)
    static let iPhoneVoIPOnly = DeviceFacts(platform: .ios, hasVoIPToken: true)
    static let iPhoneSandbox = DeviceFacts(platform: .ios, hasAPNsToken: true, apnsEnvironment: .sandbox)
    static let android = DeviceFacts(platform: .android)
    static let androidWithFCM = DeviceFacts(platform: .android, hasFCMToken: true)
    static let forAndroid = MessageFacts(hasNotification: true, reachesApple: true, isLiveActivity: false, reachesAndroid: true, stored: true)
    static let forAndroidNotStored = MessageFacts(
        hasNotification: true,
        reachesApple: true,
        isLiveActivity: false,
        reachesAndroid: true,
        stored: false
    )
    static let inAppForAndroid = MessageFacts(hasNotification: false, reachesApple: false, isLiveActivity: false, reachesAndroid: true, stored: true)
    static let appleOnly = MessageFacts(hasNotification: true, reachesApple: true, isLiveActivity: false, reachesAndroid: false, stored: true)
    static let androidInBackground = DeviceFacts(platform: .android, inBackground: true)

    struct FirstHopRow: Sendable, CustomTestStringConvertible {
        var rule: String
        var message: MessageFacts
        var device: DeviceFacts
        var connectedHere: Bool
        var peers: Bool
        var hop: RoutePlanner.FirstHop
        var testDescription: String { rule }
    }

    static let firstHops: [FirstHopRow] = [
        .init(rule: "connected here: over the connection", message: notification, device: iPhone, connectedHere: true, peers: true, hop: .connection),
        .init(rule: "connected elsewhere maybe: ask the peers", message: notification, device: iPhone, connectedHere: false, peers: true, hop: .peer),
        .init(rule: "no peers: the fallback", message: notification, device: iPhone, connectedHere: false, peers: false, hop: .fallback),
        .init(
            rule: "a notification for an app in the background: APNs, not the connection",
            message: notification,
            device: iPhoneInBackground,
            connectedHere: true,
            peers: true,
            hop: .fallback
        ),
        .init(
            rule: "an in-app message for an app in the background: the connection still",
            message: inAppOnly,
            device: iPhoneInBackground,
            connectedHere: true,
            peers: true,
            hop: .connection
        ),
        .init(
            rule: "a notification for an Android app in the background: not the connection",
            message: androidOnly,
            device: androidInBackground,
            connectedHere: true,
            peers: true,
            hop: .fallback
        ),
        .init(rule: "a Live Activity: never a connection", message: liveActivity, device: iPhone, connectedHere: true, peers: true, hop: .fallback),
        .init(rule: "a Live Activity: never a peer", message: liveActivity, device: iPhone, connectedHere: false, peers: true, hop: .fallback),
        .init(
            rule: "held by the app's quiet hours or dropped by its daily cap: not routed",
            message: notification,
            device: DeviceFacts(platform: .ios, hasAPNsToken: true, isWithheld: true),
            connectedHere: true,
            peers: true,
            hop: .withheld
        ),
        .init(
            rule: "withheld: not to a peer nor APNs either",
            message: notification,
            device: DeviceFacts(platform: .ios, hasAPNsToken: true, isWithheld: true),
            connectedHere: false,
            peers: true,
            hop: .withheld
        ),
        .init(
            rule: "in the background, held by a peer: not to the peer either",
            message: notification,
            device: iPhoneInBackground,
            connectedHere: false,
            peers: true,
            hop: .fallback
        ),
    ]

    @Test(arguments: firstHops) func firstHop(_ row: FirstHopRow) {
        #expect(RoutePlanner.firstHop(row.message, row.device, connectedHere: row.connectedHere, peers: row.peers) == row.hop)
    }

    struct FallbackRow: Sendable, CustomTestStringConvertible {
        var rule: String
        var message: MessageFacts
        var device: DeviceFacts
        var acknowledged: Bool
        var route: RoutePlanner.Route
        var testDescription: String { rule }
    }

    static let production = RoutePlanner.Route.apns(APNsRoute(apnsProduction: nil, deviceEnvironment: .production))

    static let fallbacks: [FallbackRow] = [
        .init(rule: "acknowledged: delivered", message: notification, device: iPhone, acknowledged: true, route: .delivered),
        .init(rule: "not acknowledged, an iPhone with a token: APNs", message: notification, device: iPhone, acknowledged: false, route: production),
        .init(rule: "a dead token: the inbox", message: notification, device: iPhoneDeadToken, acknowledged: false, route: .inbox),
        .init(rule: "no token: the inbox", message: notification, device: iPhoneNoToken, acknowledged: false, route: .inbox),
        .init(
            rule: "not stored and not delivered: expired",
            message: notificationNotStored,
            device: iPhoneNoToken,
            acknowledged: false,
            route: .expire
        ),
        .init(rule: "an in-app message never goes to APNs", message: inAppOnly, device: iPhone, acknowledged: false, route: .inbox),
        .init(rule: "a notification with nothing for Apple: the inbox", message: androidOnly, device: iPhone, acknowledged: false, route: .inbox),
        .init(rule: "Android without an FCM token: the inbox", message: forAndroid, device: android, acknowledged: false, route: .inbox),
        .init(rule: "Android with an FCM token: FCM", message: forAndroid, device: androidWithFCM, acknowledged: false, route: .fcm),
        .init(
            rule: "Android acknowledged over MQTT: never FCM too",
            message: forAndroid,
            device: androidWithFCM,
            acknowledged: true,
            route: .delivered
        ),
        .init(
            rule: "not stored, Android with a token: FCM still",
            message: forAndroidNotStored,
            device: androidWithFCM,
            acknowledged: false,
            route: .fcm
        ),
        .init(
            rule: "an in-app message to Android: FCM (as data)",
            message: inAppForAndroid,
            device: androidWithFCM,
            acknowledged: false,
            route: .fcm
        ),
        .init(rule: "nothing for Android (iOS part only): the inbox", message: appleOnly, device: androidWithFCM, acknowledged: false, route: .inbox),
        .init(
            rule: "an iPhone never goes to FCM",
            message: forAndroid,
            device: DeviceFacts(platform: .ios, hasFCMToken: true),
            acknowledged: false,
            route: .inbox
        ),
        .init(rule: "a Live Activity never goes to FCM", message: liveActivity, device: androidWithFCM, acknowledged: false, route: .expire),
        .init(rule: "a VoIP push to a VoIP token", message: voip, device: iPhoneVoIPOnly, acknowledged: false, route: production),
        .init(rule: "a VoIP push without a VoIP token: the inbox", message: voip, device: iPhone, acknowledged: false, route: .inbox),
        .init(
            rule: "a notification with VoIP beside, only a VoIP token: APNs",
            message: withVoIPBeside,
            device: iPhoneVoIPOnly,
            acknowledged: false,
            route: production
        ),
        .init(rule: "a Live Activity on an Apple device: APNs", message: liveActivity, device: iPhoneNoToken, acknowledged: false, route: production),
        .init(rule: "a Live Activity elsewhere: expired", message: liveActivity, device: android, acknowledged: false, route: .expire),
        .init(
            rule: "the environment the push asks for",
            message: forcedSandbox,
            device: iPhone,
            acknowledged: false,
            route: .apns(APNsRoute(apnsProduction: false, deviceEnvironment: .production))
        ),
        .init(
            rule: "else the device's own",
            message: notification,
            device: iPhoneSandbox,
            acknowledged: false,
            route: .apns(APNsRoute(apnsProduction: nil, deviceEnvironment: .sandbox))
        ),
    ]

    @Test(arguments: fallbacks) func fallback(_ row: FallbackRow) {
        #expect(RoutePlanner.fallback(row.message, row.device, acknowledged: row.acknowledged) == row.route)
    }

    struct EnvironmentRow: Sendable, CustomTestStringConvertible {
        var asked: Bool?
        var device: APNsEnvironment?
        var environment: APNsEnvironment
        var forced: Bool
        var testDescription: String { "apns_production \(asked.map(String.init) ?? "absent"), device \(device?.rawValue ?? "unsaid")" }
    }

    static let environments: [EnvironmentRow] = [
        .init(asked: nil, device: nil, environment: .production, forced: false),
        .init(asked: nil, device: .sandbox, environment: .sandbox, forced: false),
        .init(asked: nil, device: .production, environment: .production, forced: false),
        .init(asked: true, device: .production, environment: .production, forced: false),
        .init(asked: true, device: .sandbox, environment: .production, forced: true),
        .init(asked: false, device: .sandbox, environment: .sandbox, forced: false),
        .init(asked: false, device: .production, environment: .sandbox, forced: true),
        .init(asked: false, device: nil, environment: .sandbox, forced: true),
    ]

    @Test(arguments: environments) func environment(_ row: EnvironmentRow) {
        let route = APNsRoute(apnsProduction: row.asked, deviceEnvironment: row.device)
        #expect(route.environment == row.environment && route.isForcedElsewhere == row.forced)
    }

    /// The accepting statement's two answers per push (a device in the background, one
    /// not), which it picks from in SQL: the same as the rule for a device.
    @Test(arguments: [notification, notificationNotStored, inAppOnly, androidOnly, liveActivity, voip])
    func theAcceptingStatementsAnswersAreTheRule(_ message: MessageFacts) {
        for device in [Self.iPhone, Self.iPhoneInBackground, Self.android, Self.androidInBackground] {
            #expect(
                RoutePlanner.mayTravelOverConnection(message, inBackground: device.inBackground)
                    == RoutePlanner.mayTravelOverConnection(message, device)
            )
        }
        #expect(RoutePlanner.mayTravelOverConnection(message, inBackground: true) == (!message.isLiveActivity && !message.hasNotification))
        #expect(RoutePlanner.mayTravelOverConnection(message, inBackground: false) == !message.isLiveActivity)
    }

    struct RecallRow: Sendable, CustomTestStringConvertible {
        var rule: String
        var message: MessageFacts
        var device: DeviceFacts
        var route: RoutePlanner.Route?
        var testDescription: String { rule }
    }

    static let recalls: [RecallRow] = [
        .init(rule: "an iPhone with a live token: a silent APNs push", message: notification, device: iPhone, route: production),
        .init(rule: "a dead token: nothing", message: notification, device: iPhoneDeadToken, route: nil),
        .init(rule: "only a VoIP token: nothing (no silent push to it)", message: notification, device: iPhoneVoIPOnly, route: nil),
        .init(
            rule: "in the environment the recall's push asks for",
            message: forcedSandbox,
            device: iPhone,
            route: .apns(APNsRoute(apnsProduction: false, deviceEnvironment: .production))
        ),
        .init(rule: "Android with an FCM token: an FCM data message", message: notification, device: androidWithFCM, route: .fcm),
        .init(rule: "Android without one: nothing", message: notification, device: android, route: nil),
    ]

    @Test(arguments: recalls) func recall(_ row: RecallRow) {
        #expect(RoutePlanner.recallRoute(row.message, row.device) == row.route)
    }

    /// The facts as the center reads them from a push.
    @Test func aPushsFactsAreReadOnce() throws {
        let request = try JSONDecoder().decode(
            PushRequest.self,
            from: Data(#"{"platform": "all", "audience": "all", "notification": {"alert": "hi"}, "options": {"time_to_live": 0}}"#.utf8)
        )
        let facts = MessageFacts(try request.validated())
        #expect(facts.hasNotification && facts.reachesApple && !facts.stored && !facts.isLiveActivity)
        let message = try JSONDecoder().decode(
            PushRequest.self,
            from: Data(#"{"platform": "all", "audience": "all", "message": {"msg_content": "in app"}}"#.utf8)
        )
        let inApp = MessageFacts(try message.validated())
        #expect(!inApp.hasNotification && !inApp.reachesApple && inApp.stored && inApp.reachesAndroid)
        let iosOnly = try JSONDecoder().decode(
            PushRequest.self,
            from: Data(#"{"platform": "all", "audience": "all", "notification": {"ios": {"alert": "hi"}}}"#.utf8)
        )
        #expect(!MessageFacts(try iosOnly.validated()).reachesAndroid)
        #expect(facts.reachesAndroid)
    }

    @Test func theChannelsRoutesNameTheirChannel() {
        #expect(RoutePlanner.Route.fcm.channel == "fcm")
        #expect(Self.production.channel == "apns")
        #expect([RoutePlanner.Route.delivered, .inbox, .expire].allSatisfy { $0.channel == nil })
    }
}
