/// The answers of the admin, device, alias and tag routes that heraldctl shows as tables.
/// Decoding ignores keys it doesn't know, so a newer server still works.

/// `POST /admin/v1/apps` → 201.
struct CreatedApp: Decodable {
    var appKey: String
    var masterSecret: String
    var name: String
    var createdAt: String

    enum CodingKeys: String, CodingKey {
        case name
        case appKey = "app_key"
        case masterSecret = "master_secret"
        case createdAt = "created_at"
    }
}

/// `GET /admin/v1/apps/{app_key}`, and each app of the list.
struct App: Decodable {
    var appKey: String
    var name: String
    var createdAt: String
    var apns: APNsStatus?
    var rateLimit: RateLimit
    var quietHours: QuietHours?
    var dailyCap: Int?
    var timeZone: String

    /// `{"start", "end", "action"}`.
    struct QuietHours: Decodable {
        var start: String
        var end: String
        var action: String
    }

    /// The settings `apps show` and `apps update` print.
    var settingsFields: [(String, String)] {
        [("time_zone", timeZone)] + rateLimit.fields + [
            ("quiet_hours", quietHours.map { "\($0.start)-\($0.end) local time, \($0.action)" } ?? "none"),
            ("daily_cap", dailyCap.map { "\($0) operations pushes a device a day" } ?? "none"),
        ]
    }

    /// `{"per_minute": n, "source": "app" | "default"}`.
    struct RateLimit: Decodable {
        var perMinute: Int
        var source: String

        enum CodingKeys: String, CodingKey {
            case source
            case perMinute = "per_minute"
        }

        var fields: [(String, String)] {
            let limit = perMinute == 0 ? "none" : "\(perMinute) push requests a minute"
            return [("rate_limit", source == "default" ? "\(limit) (the server's default)" : limit)]
        }
    }

    enum CodingKeys: String, CodingKey {
        case name, apns
        case appKey = "app_key"
        case createdAt = "created_at"
        case rateLimit = "rate_limit"
        case quietHours = "quiet_hours"
        case dailyCap = "daily_cap"
        case timeZone = "time_zone"
    }
}

/// `GET /admin/v1/apps`.
struct AppList: Decodable {
    var apps: [App]
}

/// What APNs credentials an app has (never the secrets).
struct APNsStatus: Decodable {
    var type: String
    var bundleID: String
    var environment: String
    var keyID: String?
    var teamID: String?
    var certificateSubject: String?
    var certificateExpiresAt: String?
    var updatedAt: String
    var status: String?
    var problem: String?
    /// "apple", or "sandbox" when the server doesn't use the credentials.
    var sentTo: String?
    var note: String?

    enum CodingKeys: String, CodingKey {
        case type, environment, status, problem, note
        case sentTo = "sent_to"
        case bundleID = "bundle_id"
        case keyID = "key_id"
        case teamID = "team_id"
        case certificateSubject = "certificate_subject"
        case certificateExpiresAt = "certificate_expires_at"
        case updatedAt = "updated_at"
    }

    /// `token ABC123DEFG (team DEF123GHIJ)` or `certificate CN=...`: one column of a table.
    var summary: String {
        switch type {
        case "token": "token \(keyID ?? "?") team \(teamID ?? "?")"
        case "certificate": "certificate, expires \(certificateExpiresAt ?? "?")"
        default: type
        }
    }

    var fields: [(String, String)] {
        var pairs: [(String, String)] = [("type", type), ("bundle_id", bundleID), ("environment", environment)]
        if let keyID { pairs.append(("key_id", keyID)) }
        if let teamID { pairs.append(("team_id", teamID)) }
        if let certificateSubject { pairs.append(("certificate_subject", certificateSubject)) }
        if let certificateExpiresAt { pairs.append(("certificate_expires_at", certificateExpiresAt)) }
        pairs.append(("updated_at", updatedAt))
        if let status { pairs.append(("status", problem.map { "\(status) (\($0))" } ?? status)) }
        if let sentTo { pairs.append(("sent_to", sentTo == "sandbox" ? "sandbox: NOT USED (\(note ?? "the local APNs sandbox"))" : sentTo)) }
        return pairs
    }
}

/// `GET /v3/devices/{registration_id}`.
struct Device: Decodable {
    var registrationID: String
    var platform: String
    var alias: String?
    var tags: [String]
    var apnsToken: String?
    var apnsEnvironment: String?
    var voipToken: String?
    var tokenValid: Bool
    var mobile: String?
    var createdAt: String
    var updatedAt: String

    enum CodingKeys: String, CodingKey {
        case platform, alias, tags, mobile
        case registrationID = "registration_id"
        case apnsToken = "apns_token"
        case apnsEnvironment = "apns_environment"
        case voipToken = "voip_token"
        case tokenValid = "token_valid"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    var fields: [(String, String)] {
        [
            ("registration_id", registrationID),
            ("platform", platform),
            ("alias", alias ?? "-"),
            ("tags", tags.isEmpty ? "-" : tags.joined(separator: ", ")),
            ("apns_token", apnsToken ?? "-"),
            ("apns_environment", apnsEnvironment ?? "-"),
            ("voip_token", voipToken ?? "-"),
            ("token_valid", tokenValid ? "yes" : "no"),
            ("mobile", mobile ?? "-"),
            ("created_at", createdAt),
            ("updated_at", updatedAt),
        ]
    }
}

/// `GET /v3/aliases/{alias}`.
struct RegistrationIDList: Decodable {
    var registrationIDs: [String]

    enum CodingKeys: String, CodingKey { case registrationIDs = "registration_ids" }
}

/// `GET /v3/tags`.
struct TagList: Decodable {
    var tags: [String]
}

/// `POST /v3/tags/{tag}`.
struct TagMembersResult: Decodable {
    var added: Int
    var removed: Int
}

/// `GET /v3/tags/{tag}/registration_ids/{registration_id}`.
struct TagMembership: Decodable {
    var result: Bool
}
