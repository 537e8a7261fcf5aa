import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

struct RegisterDeviceRequest: Decodable {
    var appKey: String
    var platform: String
    var apnsToken: String?
    var voipToken: String?
    var apnsEnvironment: String?
    var timeZone: String?
    var language: String?
    var fcmToken: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case language
        case platform
        case fcmToken = "fcm_token"
        case appKey = "app_key"
        case apnsToken = "apns_token"
        case voipToken = "voip_token"
        case apnsEnvironment = "apns_environment"
        case timeZone = "time_zone"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        appKey = try container.decode(String.self, forKey: .appKey)
        platform = try container.decode(String.self, forKey: .platform)
        apnsToken = try container.decodeIfPresent(String.self, forKey: .apnsToken)
        voipToken = try container.decodeIfPresent(String.self, forKey: .voipToken)
        apnsEnvironment = try container.decodeIfPresent(String.self, forKey: .apnsEnvironment)
        timeZone = try container.decodeIfPresent(String.self, forKey: .timeZone)
        language = try container.decodeIfPresent(String.self, forKey: .language)
        fcmToken = try container.decodeIfPresent(String.self, forKey: .fcmToken)
    }

    func validated() throws(HeraldError) -> (appKey: String, registration: DeviceRegistration) {
        guard Identifiers.isAppKey(appKey) else { throw .invalidField("app_key", "not an app key") }
        guard let platform = Platform(rawValue: platform) else {
            throw .invalidField("platform", "must be one of \(Platform.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let environment = try apnsEnvironment.map { value throws(HeraldError) in
            guard let environment = APNsEnvironment(rawValue: value) else {
                throw .invalidField("apns_environment", "must be production or sandbox")
            }
            return environment
        }
        if !platform.usesAPNs, apnsToken != nil || voipToken != nil {
            throw .invalidField("apns_token", "only Apple platforms have APNs tokens")
        }
        if platform != .android, fcmToken != nil {
            throw .invalidField("fcm_token", "only Android devices have FCM tokens")
        }
        return (
            appKey,
            DeviceRegistration(
                platform: platform,
                apnsToken: try apnsToken.map { token throws(HeraldError) in try Validation.apnsToken(token, field: "apns_token") },
                voipToken: try voipToken.map { token throws(HeraldError) in try Validation.apnsToken(token, field: "voip_token") },
                apnsEnvironment: environment,
                timeZone: try timeZone.map { zone throws(HeraldError) in try Validation.timeZone(zone, field: "time_zone").identifier },
                language: try language.map { tag throws(HeraldError) in try Validation.language(tag, field: "language") },
                fcmToken: try fcmToken.map { token throws(HeraldError) in try Validation.fcmToken(token, field: "fcm_token") }
            )
        )
    }
}

/// `{"tags": {"add": [...], "remove": [...]} | "", "alias": "..." | "" | null, "apns_token": "..." | null, ...}`
/// An empty string or null clears a value; an absent key leaves it alone.
struct UpdateDeviceRequest: Decodable {
    enum Tags {
        case clear
        case change(add: [String], remove: [String])
    }

    var tags: Tags?
    var alias: DeviceChange.Update<String>?
    var apnsToken: DeviceChange.Update<String>?
    var voipToken: DeviceChange.Update<String>?
    var fcmToken: DeviceChange.Update<String>?
    var apnsEnvironment: String?
    var mobile: DeviceChange.Update<String>?
    var timeZone: DeviceChange.Update<String>?
    var language: DeviceChange.Update<String>?
    var badge: Int?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case tags, alias, mobile, badge
        case timeZone = "time_zone"
        case language
        case apnsToken = "apns_token"
        case voipToken = "voip_token"
        case fcmToken = "fcm_token"
        case apnsEnvironment = "apns_environment"
    }

    struct TagChange: Decodable {
        var add: [String]?
        var remove: [String]?

        enum CodingKeys: String, CodingKey, CaseIterable { case add, remove }

        init(from decoder: any Decoder) throws {
            let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
            add = try container.decodeIfPresent([String].self, forKey: .add)
            remove = try container.decodeIfPresent([String].self, forKey: .remove)
        }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        if container.contains(.tags) {
            if let text = try? container.decode(String.self, forKey: .tags) {
                guard text.isEmpty else { throw HeraldError.invalidField("tags", "expected an object with add/remove, or \"\" to clear") }
                tags = .clear
            } else {
                let change = try container.decode(TagChange.self, forKey: .tags)
                tags = .change(add: change.add ?? [], remove: change.remove ?? [])
            }
        }
        alias = try Self.nullable(container, .alias)
        apnsToken = try Self.nullable(container, .apnsToken)
        voipToken = try Self.nullable(container, .voipToken)
        fcmToken = try Self.nullable(container, .fcmToken)
        apnsEnvironment = try container.decodeIfPresent(String.self, forKey: .apnsEnvironment)
        mobile = try Self.nullable(container, .mobile)
        timeZone = try Self.nullable(container, .timeZone)
        language = try Self.nullable(container, .language)
        badge = try container.decodeIfPresent(Int.self, forKey: .badge)
    }

    /// Absent: leave alone; `null`: clear; a string: set.
    static func nullable(_ container: StrictKeyedContainer<CodingKeys>, _ key: CodingKeys) throws -> DeviceChange.Update<String>? {
        guard container.contains(key) else { return nil }
        if try container.decodeNil(forKey: key) { return .clear }
        return .set(try container.decode(String.self, forKey: key))
    }

    func validated() throws(HeraldError) -> DeviceChange {
        var change = DeviceChange()
        switch tags {
        case nil:
            break
        case .clear:
            change.clearTags = true
        case .change(let add, let remove):
            change.addTags = try Validation.labels(add, field: "tags.add", max: Limits.maxTagsPerChange)
            change.removeTags = try Validation.labels(remove, field: "tags.remove", max: Limits.maxTagsPerChange)
            if let both = change.addTags.first(where: change.removeTags.contains) {
                throw .invalidField("tags", "'\(both)' is both added and removed")
            }
        }
        switch alias {
        case .set(let alias) where !alias.isEmpty: change.alias = .set(try Validation.label(alias, field: "alias"))
        case .set, .clear: change.alias = .clear
        case nil: break
        }
        switch apnsToken {
        case .set(let token): change.apnsToken = .set(try Validation.apnsToken(token, field: "apns_token"))
        case .clear: change.apnsToken = .clear
        case nil: break
        }
        switch voipToken {
        case .set(let token): change.voipToken = .set(try Validation.apnsToken(token, field: "voip_token"))
        case .clear: change.voipToken = .clear
        case nil: break
        }
        switch fcmToken {
        case .set(let token) where !token.isEmpty: change.fcmToken = .set(try Validation.fcmToken(token, field: "fcm_token"))
        case .set, .clear: change.fcmToken = .clear
        case nil: break
        }
        if let apnsEnvironment {
            guard let environment = APNsEnvironment(rawValue: apnsEnvironment) else {
                throw .invalidField("apns_environment", "must be production or sandbox")
            }
            change.apnsEnvironment = environment
        }
        // JPush's device API: the device's mobile number; "" or null clears it.
        switch mobile {
        case .set(let mobile) where !mobile.isEmpty: change.mobile = .set(try Validation.mobile(mobile))
        case .set, .clear: change.mobile = .clear
        case nil: break
        }
        // The device's IANA time zone; "" or null clears it.
        switch timeZone {
        case .set(let zone) where !zone.isEmpty: change.timeZone = .set(try Validation.timeZone(zone, field: "time_zone").identifier)
        case .set, .clear: change.timeZone = .clear
        case nil: break
        }
        // The device's BCP 47 language (localized pushes); "" or null clears it.
        switch language {
        case .set(let tag) where !tag.isEmpty: change.language = .set(try Validation.language(tag, field: "language"))
        case .set, .clear: change.language = .clear
        case nil: break
        }
        // The badge the app shows now (JPush's setBadge / resetBadge).
        if let badge {
            guard (0...IOSNotification.Badge.maxInText).contains(badge) else {
                throw .invalidField("badge", "must be 0 to \(IOSNotification.Badge.maxInText)")
            }
            change.badge = badge
        }
        return change
    }
}

struct RegisteredDeviceResponse: ResponseEncodable {
    var registrationId: String
    var deviceSecret: String

    init(_ device: RegisteredDevice) {
        registrationId = device.registrationID
        deviceSecret = device.deviceSecret
    }
}

struct DeviceResponse: ResponseEncodable {
    var device: DeviceRecord

    init(_ device: DeviceRecord) { self.device = device }

    enum CodingKeys: String, CodingKey {
        case registrationId, platform, alias, tags, apnsToken, apnsEnvironment, voipToken, tokenValid, createdAt, updatedAt
        case online, node, lastOnlineAt, mobile, timeZone, language, badge, fcmToken
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(device.registrationID, forKey: .registrationId)
        try container.encode(device.platform.rawValue, forKey: .platform)
        try container.encode(device.alias, forKey: .alias)
        try container.encode(device.tags, forKey: .tags)
        try container.encode(device.apnsToken, forKey: .apnsToken)
        try container.encode(device.apnsEnvironment?.rawValue, forKey: .apnsEnvironment)
        try container.encode(device.voipToken, forKey: .voipToken)
        try container.encode(device.tokenValid, forKey: .tokenValid)
        try container.encode(device.createdAt, forKey: .createdAt)
        try container.encode(device.updatedAt, forKey: .updatedAt)
        try container.encode(device.node != nil, forKey: .online)
        try container.encode(device.node, forKey: .node)
        try container.encode(device.lastOnlineAt, forKey: .lastOnlineAt)
        try container.encode(device.mobile, forKey: .mobile)
        try container.encode(device.timeZone, forKey: .timeZone)
        try container.encode(device.language, forKey: .language)
        try container.encode(device.badge, forKey: .badge)
        try container.encode(device.fcmToken, forKey: .fcmToken)
    }
}
