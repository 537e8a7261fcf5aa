import Foundation

/// Why a device did or did not get its pushes, from what Herald knows about it, its app's
/// APNs credentials and its last copies: `GET /v3/devices/{rid}/diagnosis` and
/// `heraldctl doctor`. A pure function of those facts, so each finding is testable alone.
public struct DeviceDiagnosis: Sendable, Hashable {
    /// What Herald knows, as the store reads it.
    public struct Facts: Sendable, Hashable {
        public var platform: Platform
        public var hasAPNsToken: Bool
        public var tokenValid: Bool
        public var tokenInvalidatedAt: Date?
        /// The environment the device registered its token for.
        public var tokenEnvironment: APNsEnvironment?
        public var inBackground: Bool
        /// The node holding its MQTT connection now, if any.
        public var node: String?
        public var lastOnlineAt: Date?
        public var credentials: APNsCredentialsSummary?
        /// APNs refused the app's credentials with this reason.
        public var credentialsProblem: String?
        /// Its last copies, newest first.
        public var recent: [Copy]
        /// The server sends APNs traffic to its local sandbox, not to Apple: credentials
        /// are not needed, and nothing reaches a real device.
        public var toSandbox = false
        /// It has a VoIP (PushKit) token now.
        public var hasVoIPToken = false
        /// It has an FCM registration token now (Android).
        public var hasFCMToken = false
        /// The app's FCM service account, and FCM's refusal of it.
        public var fcmCredentials: FCMCredentialsSummary?
        public var fcmProblem: String?

        public init(
            platform: Platform,
            hasAPNsToken: Bool,
            tokenValid: Bool,
            tokenInvalidatedAt: Date? = nil,
            tokenEnvironment: APNsEnvironment? = nil,
            inBackground: Bool = false,
            node: String? = nil,
            lastOnlineAt: Date? = nil,
            credentials: APNsCredentialsSummary? = nil,
            credentialsProblem: String? = nil,
            recent: [Copy] = []
        ) {
            self.platform = platform
            self.hasAPNsToken = hasAPNsToken
            self.tokenValid = tokenValid
            self.tokenInvalidatedAt = tokenInvalidatedAt
            self.tokenEnvironment = tokenEnvironment
            self.inBackground = inBackground
            self.node = node
            self.lastOnlineAt = lastOnlineAt
            self.credentials = credentials
            self.credentialsProblem = credentialsProblem
            self.recent = recent
        }
    }

    /// One copy of a message for the device, as its status reads.
    public struct Copy: Sendable, Hashable {
        public var msgID: String
        public var sentAt: Date
        /// The status `POST /v3/report/status/message` gives (`delivered_tcp`, `sent_apns`,
        /// `waiting`, `held`, `dropped`, `failed`, …).
        public var status: String
        /// APNs' reason, or why it was dropped.
        public var reason: String?
        public var opened: Bool

        public init(msgID: String, sentAt: Date, status: String, reason: String? = nil, opened: Bool = false) {
            self.msgID = msgID
            self.sentAt = sentAt
            self.status = status
            self.reason = reason
            self.opened = opened
        }
    }

    public struct Finding: Sendable, Hashable, Codable {
        public enum Level: String, Sendable, Hashable, Codable {
            /// Stops pushes from arriving.
            case problem
            /// Limits when or how they arrive.
            case warning
            case info
        }

        public var level: Level
        /// Stable, for scripts: `no_apns_token`, `token_invalid`, …
        public var code: String
        public var message: String
    }

    public var findings: [Finding]

    public init(_ facts: Facts) {
        var findings: [Finding] = []
        func add(_ level: Finding.Level, _ code: String, _ message: String) {
            findings.append(Finding(level: level, code: code, message: message))
        }
        if facts.platform.usesAPNs {
            Self.apns(facts, add)
        } else if facts.platform == .android {
            Self.fcm(facts, add)
        }
        if let node = facts.node {
            add(.info, "online", "connected now, to node \(node): pushes go over the long connection first")
        } else if let last = facts.lastOnlineAt {
            add(
                .info,
                "offline",
                "offline since \(Self.format(last)): copies wait in its inbox\(Self.fallback(facts).map { " and go to \($0)" } ?? "")"
            )
        } else {
            add(.info, "never_connected", "has never connected over MQTT\(Self.fallback(facts).map { ": it gets pushes through \($0) only" } ?? "")")
        }
        if facts.inBackground, facts.node != nil {
            add(.info, "in_background", "the app said it is in the background: notifications go to APNs, not over the connection")
        }
        Self.recent(facts.recent, facts, add)
        if !findings.contains(where: { $0.level != .info }) {
            add(.info, "nothing_wrong", "nothing found that would stop its pushes")
        }
        self.findings = findings
    }

    private static func apns(_ facts: Facts, _ add: (Finding.Level, String, String) -> Void) {
        guard facts.hasAPNsToken else {
            add(
                .warning,
                "no_apns_token",
                "no APNs token: it gets pushes only while its app is connected (the app has not registered for remote notifications)"
            )
            return
        }
        if !facts.tokenValid {
            let since = facts.tokenInvalidatedAt.map { " since \(format($0))" } ?? ""
            add(
                .problem,
                "token_invalid",
                "APNs said its token is dead\(since) (uninstalled, or notifications off): nothing goes to APNs until the app registers a new one"
            )
        }
        if facts.toSandbox {
            add(
                .warning,
                "apns_sandbox",
                "this server sends APNs traffic to its local APNs sandbox, not to Apple: nothing reaches a real device (HERALD_APNS_SANDBOX=off sends to Apple)"
            )
            return
        }
        guard let credentials = facts.credentials else {
            add(
                .problem,
                "no_apns_credentials",
                "the app has no APNs credentials: nothing reaches it while its app is not connected (PUT /admin/v1/apps/{app_key}/apns)"
            )
            return
        }
        if let problem = facts.credentialsProblem {
            add(
                .problem,
                "credentials_refused",
                "APNs refused the app's credentials (\(problem)): \(APNsAdvice.explain(reason: problem, environment: credentials.environment))"
            )
        }
        if let tokenEnvironment = facts.tokenEnvironment, tokenEnvironment != credentials.environment, credentials.type == .certificate {
            add(
                .problem,
                "environment_mismatch",
                "its token is a \(tokenEnvironment.rawValue) token but the app's certificate is for \(credentials.environment.rawValue): APNs answers BadDeviceToken (a build from Xcode is sandbox; TestFlight and the App Store are production)"
            )
        }
    }

    /// The push service its copies go to while it is not connected, if any.
    private static func fallback(_ facts: Facts) -> String? {
        if facts.platform.usesAPNs { return "APNs" }
        return facts.platform == .android && facts.hasFCMToken && facts.fcmCredentials != nil ? "FCM" : nil
    }

    private static func fcm(_ facts: Facts, _ add: (Finding.Level, String, String) -> Void) {
        guard facts.hasFCMToken else {
            // Not a problem where there is no Google Play (JPush's own market): the long
            // connection is the channel there.
            add(
                .info,
                "no_fcm_token",
                "no FCM token: it gets pushes only while its app is connected (the app has not registered FirebaseMessaging's token: fcm_token)"
            )
            return
        }
        guard facts.fcmCredentials != nil else {
            add(
                .problem,
                "no_fcm_credentials",
                "the app has no FCM service account: nothing reaches it while its app is not connected (PUT /admin/v1/apps/{app_key}/fcm)"
            )
            return
        }
        if let problem = facts.fcmProblem {
            add(
                .problem,
                "fcm_credentials_refused",
                "FCM refused the app's service account (\(problem)): nothing goes to FCM for the app until a new key file is uploaded"
            )
        }
    }

    private static func recent(_ copies: [Copy], _ facts: Facts, _ add: (Finding.Level, String, String) -> Void) {
        var reasons: [String: Int] = [:]
        for copy in copies where copy.status == "failed" { reasons[copy.reason ?? "unknown", default: 0] += 1 }
        if facts.platform == .android {
            for (reason, count) in reasons.sorted(by: { $0.key < $1.key }) {
                let dead = ["UNREGISTERED", "SENDER_ID_MISMATCH", "InvalidRegistration"].contains(reason)
                add(
                    .problem,
                    "fcm_failed",
                    "\(count) of its last \(copies.count) copies failed at FCM with \(reason)\(dead ? ": FCM said its token was dead (the app was uninstalled, or the token is another Firebase project's); Herald removed it, and FCM reaches it again once the app registers a new one" : "")"
                )
            }
            reasons.removeAll()
        }
        if let count = reasons.removeValue(forKey: APNsAdvice.wrongEnvironment) {
            // The push's fault, not the token's: the token stays valid.
            add(
                .warning,
                "wrong_environment",
                "\(count) of its last \(copies.count) copies failed: \(APNsAdvice.explain(reason: APNsAdvice.wrongEnvironment, environment: facts.tokenEnvironment))"
            )
        }
        for (reason, count) in reasons.sorted(by: { $0.key < $1.key }) {
            if reason == "Unregistered" || reason == "ExpiredToken", facts.tokenValid {
                // Not its APNs token, which is valid: its VoIP token (removed at once), or a
                // token it has replaced since. No "dead since" to show.
                let which =
                    facts.hasVoIPToken
                    ? "the token they went to was dead then; the device has registered a valid one since"
                    : "they went to its VoIP token, which APNs said is dead (the app was uninstalled or turned VoIP off): Herald removed it; its APNs token is still valid, and VoIP pushes reach it again once the app registers a new VoIP token"
                add(.problem, "apns_failed", "\(count) of its last \(copies.count) copies failed at APNs with \(reason): \(which)")
                continue
            }
            add(
                .problem,
                "apns_failed",
                "\(count) of its last \(copies.count) copies failed at APNs with \(reason): \(APNsAdvice.explain(reason: reason, environment: facts.tokenEnvironment))"
            )
        }
        let held = copies.filter { $0.status == "held" }.count
        if held > 0 { add(.warning, "held", "\(held) of its last copies wait for the end of its quiet hours (the app's quiet_hours)") }
        for (reason, label) in [("QuietHours", "during its quiet hours"), ("DailyCap", "over the app's daily cap")] {
            let dropped = copies.filter { $0.status == "dropped" && $0.reason == reason }.count
            if dropped > 0 {
                add(
                    .warning,
                    "dropped_\(reason == "QuietHours" ? "quiet_hours" : "daily_cap")",
                    "\(dropped) of its last copies were dropped \(label)"
                )
            }
        }
        let expired = copies.filter { $0.status == "expired" }.count
        if expired > 0 {
            add(.warning, "expired", "\(expired) of its last copies expired before it connected (their time to live ran out)")
        }
        if copies.isEmpty { add(.info, "no_copies", "no push has targeted it yet (or its copies were purged)") }
    }

    static func format(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }
}
