import Foundation
import HeraldCore

/// A device as operators see it.
public struct DeviceRecord: Sendable, Hashable {
    public var registrationID: String
    public var platform: Platform
    public var alias: String?
    public var tags: [String]
    public var apnsToken: String?
    public var apnsEnvironment: APNsEnvironment?
    public var voipToken: String?
    public var tokenValid: Bool
    /// Its Firebase Cloud Messaging token (Android), if it registered one.
    public var fcmToken: String? = nil
    /// The mobile number JPush's device API keeps (set by an import or an update), not used
    /// to send anything yet.
    public var mobile: String?
    /// The IANA time zone the device reported, if any (local-time schedules).
    public var timeZone: String?
    /// The BCP 47 language the device reported, if any (localized pushes).
    public var language: String? = nil
    /// The badge Herald keeps for the device: set by a push or reported by the app's SDK
    /// (`setBadge`); a push's "+N" / "-N" changes it.
    public var badge: Int = 0
    public var createdAt: Date
    public var updatedAt: Date
    /// The node that holds the device's MQTT connection, while it is connected (to a node
    /// not declared dead).
    public var node: String?
    /// When the device was last online: now while it is, else when its connection closed.
    /// Nil for a device that never connected.
    public var lastOnlineAt: Date?
}

/// The result of a registration: the device's identity and a fresh secret.
public struct RegisteredDevice: Sendable, Hashable {
    public var registrationID: String
    public var deviceSecret: String
    /// False when an existing device with the same token was found.
    public var created: Bool
}

/// What a device registration carries.
public struct DeviceRegistration: Sendable, Hashable {
    public var platform: Platform
    public var apnsToken: String?
    public var voipToken: String?
    public var apnsEnvironment: APNsEnvironment?
    /// The device's IANA time zone (validated), if it reported one.
    public var timeZone: String?
    /// The device's BCP 47 language (validated), if it reported one.
    public var language: String?
    /// An Android device's FCM registration token (validated), if it has one.
    public var fcmToken: String?

    public init(
        platform: Platform,
        apnsToken: String? = nil,
        voipToken: String? = nil,
        apnsEnvironment: APNsEnvironment? = nil,
        timeZone: String? = nil,
        language: String? = nil,
        fcmToken: String? = nil
    ) {
        self.fcmToken = fcmToken
        self.language = language
        self.platform = platform
        self.apnsToken = apnsToken
        self.voipToken = voipToken
        self.apnsEnvironment = apnsEnvironment
        self.timeZone = timeZone
    }
}

/// A validated change to one device, applied atomically.
public struct DeviceChange: Sendable, Hashable {
    /// A value that is left alone, set, or cleared.
    public enum Update<Value: Sendable & Hashable>: Sendable, Hashable {
        case set(Value)
        case clear
    }

    public var clearTags = false
    public var addTags: [String] = []
    public var removeTags: [String] = []
    public var alias: Update<String>?
    public var apnsToken: Update<String>?
    public var voipToken: Update<String>?
    public var fcmToken: Update<String>?
    public var apnsEnvironment: APNsEnvironment?
    public var mobile: Update<String>?
    public var timeZone: Update<String>?
    public var language: Update<String>?
    /// The badge the app shows now (JPush's `setBadge`), so a push's "+1" counts from it.
    public var badge: Int?

    public init() {}

    public var isEmpty: Bool { self == DeviceChange() }
}

/// Who an authenticated request acts for.
public enum Principal: Sendable, Hashable {
    /// An operator holding the app's master secret.
    case app(appID: Int64, appKey: String)
    /// A device holding its own secret.
    case device(appID: Int64, registrationID: String)

    public var appID: Int64 {
        switch self {
        case .app(let appID, _), .device(let appID, _): appID
        }
    }
}
