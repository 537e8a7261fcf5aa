import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

/// `{"name": "...", "app_key": "...", "master_secret": "..."}`: the key and secret are
/// given together or not at all (an app moving from JPush keeps its own).
struct CreateAppRequest: Decodable {
    var name: String
    var appKey: String?
    var masterSecret: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name
        case appKey = "app_key"
        case masterSecret = "master_secret"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        // null is not "not given": the schema says a string (schemathesis sent a null key).
        for (key, field) in [(CodingKeys.appKey, "app_key"), (.masterSecret, "master_secret")] where container.contains(key) {
            if try container.decodeNil(forKey: key) { throw HeraldError.invalidField(field, "expected a string (got null)") }
        }
        appKey = try container.decodeIfPresent(String.self, forKey: .appKey)
        masterSecret = try container.decodeIfPresent(String.self, forKey: .masterSecret)
    }

    /// The credentials to create the app with, once their shapes are checked: what was
    /// given is kept (an app moving from JPush keeps its key and secret), and what wasn't
    /// is made as for any app. Nil when neither was given.
    func credentials() throws(HeraldError) -> (appKey: String, masterSecret: String)? {
        guard appKey != nil || masterSecret != nil else { return nil }
        if let appKey, !Identifiers.isAppKey(appKey) {
            throw .invalidField("app_key", "must be \(Identifiers.appKeyLength) lowercase hex characters, as JPush's are")
        }
        if let masterSecret, !Identifiers.isMasterSecret(masterSecret) {
            throw .invalidField(
                "master_secret",
                "must be \(Identifiers.jpushMasterSecretLength) (JPush's) or \(Identifiers.masterSecretLength) lowercase hex characters"
            )
        }
        return (appKey ?? Identifiers.newAppKey(), masterSecret ?? Identifiers.newMasterSecret())
    }
}

/// `PATCH /admin/v1/apps/{app_key}`: the settings given change, the others stay; null
/// clears one.
/// - `rate_limit_per_minute`: push requests a minute (0: none), null for the node's default.
/// - `quiet_hours`: `{"start": "22:00", "end": "08:00", "action": "hold" | "drop"}` in each
///   device's local time, or null for none.
/// - `daily_cap`: operations pushes one device gets at most per local day, or null for none.
struct UpdateAppRequest: Decodable {
    var change = AppSettingsChange()

    enum CodingKeys: String, CodingKey, CaseIterable {
        case rateLimitPerMinute = "rate_limit_per_minute"
        case quietHours = "quiet_hours"
        case dailyCap = "daily_cap"
    }

    struct QuietHoursBody: Decodable {
        var start: String
        var end: String
        var action: String?

        enum CodingKeys: String, CodingKey, CaseIterable { case start, end, action }

        init(from decoder: any Decoder) throws {
            let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
            start = try container.decode(String.self, forKey: .start)
            end = try container.decode(String.self, forKey: .end)
            action = try container.decodeIfPresent(String.self, forKey: .action)
        }

        func validated() throws(HeraldError) -> QuietHours {
            guard let from = QuietHours.seconds(start) else {
                throw .invalidField("quiet_hours.start", "expected HH:MM or HH:MM:SS, 00:00 to 23:59:59")
            }
            guard let to = QuietHours.seconds(end) else { throw .invalidField("quiet_hours.end", "expected HH:MM or HH:MM:SS, 00:00 to 23:59:59") }
            if from == to { throw .invalidField("quiet_hours", "start and end must differ") }
            guard let action = QuietHours.Action(rawValue: action ?? QuietHours.Action.hold.rawValue) else {
                throw .invalidField("quiet_hours.action", "expected hold or drop")
            }
            return QuietHours(start: from, end: to, action: action)
        }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        if container.contains(.rateLimitPerMinute) {
            let limit = try container.decodeIfPresent(Int.self, forKey: .rateLimitPerMinute)
            if let limit, !(0...1_000_000_000).contains(limit) {
                throw HeraldError.invalidField("rate_limit_per_minute", "must be 0 (no limit) to 1000000000, or null for the node's default")
            }
            change.rateLimitPerMinute = .some(limit)
        }
        if container.contains(.quietHours) {
            change.quietHours = .some(try container.decodeIfPresent(QuietHoursBody.self, forKey: .quietHours)?.validated())
        }
        if container.contains(.dailyCap) {
            let cap = try container.decodeIfPresent(Int.self, forKey: .dailyCap)
            if let cap, !(1...DeliveryControls.maxDailyCap).contains(cap) {
                throw HeraldError.invalidField("daily_cap", "must be 1 to \(DeliveryControls.maxDailyCap), or null for none")
            }
            change.dailyCap = .some(cap)
        }
    }
}

struct SetAPNsCredentialsRequest: Decodable {
    var type: String
    var bundleID: String
    var environment: String
    var keyID: String?
    var teamID: String?
    var privateKey: String
    var certificate: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case type, environment, certificate
        case bundleID = "bundle_id"
        case keyID = "key_id"
        case teamID = "team_id"
        case privateKey = "private_key"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        type = try container.decode(String.self, forKey: .type)
        bundleID = try container.decode(String.self, forKey: .bundleID)
        environment = try container.decode(String.self, forKey: .environment)
        keyID = try container.decodeIfPresent(String.self, forKey: .keyID)
        teamID = try container.decodeIfPresent(String.self, forKey: .teamID)
        privateKey = try container.decode(String.self, forKey: .privateKey)
        certificate = try container.decodeIfPresent(String.self, forKey: .certificate)
    }

    func validated() throws(HeraldError) -> APNsCredentials {
        guard let environment = APNsEnvironment(rawValue: environment) else {
            throw .invalidField("environment", "must be production or sandbox")
        }
        switch type {
        case "token":
            guard let keyID else { throw .missingField("key_id", "is required for token credentials") }
            guard let teamID else { throw .missingField("team_id", "is required for token credentials") }
            if certificate != nil { throw .invalidField("certificate", "not used with token credentials") }
            return try APNsCredentialValidator.tokenCredentials(
                keyID: keyID,
                teamID: teamID,
                privateKeyPEM: privateKey,
                bundleID: bundleID,
                environment: environment
            )
        case "certificate":
            guard let certificate else { throw .missingField("certificate", "is required for certificate credentials") }
            if keyID != nil || teamID != nil { throw .invalidField("key_id", "not used with certificate credentials") }
            return try APNsCredentialValidator.certificateCredentials(
                certificatePEM: certificate,
                privateKeyPEM: privateKey,
                bundleID: bundleID,
                environment: environment
            )
        default:
            throw .invalidField("type", "must be token or certificate")
        }
    }
}

struct AppCreatedResponse: ResponseEncodable {
    var appKey: String
    var masterSecret: String
    var name: String
    var createdAt: Date

    init(_ created: CreatedApp) {
        appKey = created.app.appKey
        masterSecret = created.masterSecret
        name = created.app.name
        createdAt = created.app.createdAt
    }
}

struct AppResponse: ResponseEncodable {
    var appKey: String
    var name: String
    var createdAt: Date
    var apns: APNsStatusResponse?
    var rateLimit: RateLimitSetting
    var quietHours: QuietHoursSetting?
    var dailyCap: Int?
    /// Set with `PUT /admin/v1/apps/{app_key}/time_zone`.
    var timeZone: String

    struct QuietHoursSetting: Encodable {
        var start: String
        var end: String
        var action: String
    }

    /// The limit the app's push requests meet, and where it comes from.
    struct RateLimitSetting: Encodable {
        /// Push requests a minute; 0: none.
        var perMinute: Int
        /// `app` (its own) or `default` (the node's `api.rateLimit.perMinute`).
        var source: String
    }

    init(_ app: AppRecord, destination: APNsDestination, defaultRateLimit: Int) {
        appKey = app.appKey
        name = app.name
        createdAt = app.createdAt
        apns = APNsStatusResponse(app, destination: destination)
        rateLimit = RateLimitSetting(perMinute: app.rateLimitPerMinute ?? defaultRateLimit, source: app.rateLimitPerMinute == nil ? "default" : "app")
        quietHours = app.controls.quietHours.map {
            QuietHoursSetting(start: QuietHours.text($0.start), end: QuietHours.text($0.end), action: $0.action.rawValue)
        }
        dailyCap = app.controls.dailyCap
        timeZone = app.timeZone
    }

    enum CodingKeys: String, CodingKey { case appKey, name, createdAt, apns, rateLimit, quietHours, dailyCap, timeZone }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(appKey, forKey: .appKey)
        try container.encode(name, forKey: .name)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(apns, forKey: .apns)
        try container.encode(rateLimit, forKey: .rateLimit)
        try container.encode(quietHours, forKey: .quietHours)
        try container.encode(dailyCap, forKey: .dailyCap)
        try container.encode(timeZone, forKey: .timeZone)
    }
}

struct AppsResponse: ResponseEncodable {
    var apps: [AppResponse]
}

struct APNsStatusResponse: ResponseEncodable {
    var type: String
    var bundleID: String
    var environment: String
    var keyID: String?
    var teamID: String?
    var certificateSubject: String?
    var certificateExpiresAt: Date?
    var updatedAt: Date
    /// "ok", or "broken" when APNs refused the credentials (see `problem`).
    var status: String
    /// APNs' reason for refusing the credentials; nothing goes to APNs until new ones are set.
    var problem: String?
    /// Where this server sends APNs traffic: "apple", or "sandbox" (the credentials are not used).
    var sentTo: String
    /// Said when the credentials are not used.
    var note: String?

    init?(_ app: AppRecord, destination: APNsDestination) {
        guard let summary = app.apns, let updatedAt = app.apnsUpdatedAt else { return nil }
        type = summary.type.rawValue
        bundleID = summary.bundleID
        environment = summary.environment.rawValue
        keyID = summary.keyID
        teamID = summary.teamID
        certificateSubject = summary.certificateSubject
        certificateExpiresAt = summary.certificateExpiresAt
        self.updatedAt = updatedAt
        status = app.apnsProblem == nil ? "ok" : "broken"
        problem = app.apnsProblem
        sentTo = destination.rawValue
        note = destination.credentialsNote
    }
}
