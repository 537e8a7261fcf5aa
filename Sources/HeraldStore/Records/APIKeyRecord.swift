import Foundation
import HeraldCore

/// An API key as operators see it (never its secret): an app's, or an admin key
/// (``appID`` nil) for the whole instance.
public struct APIKeyRecord: Sendable, Hashable {
    /// The public half (`hk_…`, admin keys `hka_…`): what lists, logs and the audit name.
    public var keyID: String
    public var appID: Int64?
    public var name: String
    public var scopes: [Scope]
    /// Client address ranges the key is used from; nil: any.
    public var allowedRanges: [IPRange]?
    public var expiresAt: Date?
    public var createdAt: Date
    /// The key this one replaced, when it was made by a rotation.
    public var rotatedFrom: String?
    public var revokedAt: Date?
    /// When and from where the key was last used (written at most once a minute).
    public var lastUsedAt: Date?
    public var lastUsedFrom: String?

    /// Whether the key authenticates at `now`.
    public func isUsable(at now: Date) -> Bool {
        revokedAt == nil && (expiresAt.map { $0 > now } ?? true)
    }

    /// Whether a request from `address` may use the key (no ranges: any address).
    public func allows(_ address: IPAddress?) -> Bool {
        guard let ranges = allowedRanges else { return true }
        guard let address else { return false }
        return ranges.contains { $0.contains(address) || address.embeddedIPv4.map($0.contains) == true }
    }
}

/// A key just made: the only time its secret exists in clear.
public struct CreatedAPIKey: Sendable {
    public var key: APIKeyRecord
    public var secret: String
}

/// What a new key is to be.
public struct APIKeySpec: Sendable, Hashable {
    public var name: String
    public var scopes: [Scope]
    public var allowedRanges: [IPRange]?
    public var expiresAt: Date?

    public init(name: String, scopes: [Scope], allowedRanges: [IPRange]? = nil, expiresAt: Date? = nil) {
        self.name = name
        self.scopes = scopes
        self.allowedRanges = allowedRanges
        self.expiresAt = expiresAt
    }
}

/// The text of a key's secret: `<key id>_<random>`, so the key is found by its id and
/// checked by its hash. App keys start `hk_`, admin keys `hka_`, people's sessions `hks_`.
public enum APIKeyText {
    public static let appPrefix = "hk_"
    public static let adminPrefix = "hka_"
    public static let sessionPrefix = "hks_"

    /// A new key id and its secret.
    public static func make(admin: Bool) -> (keyID: String, secret: String) {
        make(prefix: admin ? adminPrefix : appPrefix)
    }

    /// A new id with `prefix` and its secret.
    public static func make(prefix: String) -> (keyID: String, secret: String) {
        let keyID = prefix + RandomToken.hex(byteCount: 6)
        return (keyID, keyID + "_" + RandomToken.hex(byteCount: 24))
    }

    /// The key id a secret names, or nil when it is not a key's secret.
    public static func keyID(of secret: String) -> String? {
        id(of: secret, prefix: adminPrefix) ?? id(of: secret, prefix: appPrefix)
    }

    /// The id a secret with `prefix` names, or nil when it is not one.
    public static func id(of secret: String, prefix: String) -> String? {
        guard secret.hasPrefix(prefix) else { return nil }
        let rest = secret.utf8.dropFirst(prefix.utf8.count)
        guard rest.count == 12 + 1 + 48, rest.allSatisfy({ Self.isHex($0) || $0 == UInt8(ascii: "_") }),
            rest[rest.index(rest.startIndex, offsetBy: 12)] == UInt8(ascii: "_")
        else { return nil }
        return prefix + String(decoding: rest.prefix(12), as: UTF8.self)
    }

    /// Whether `text` is a key id of the kind given.
    public static func isKeyID(_ text: String, admin: Bool) -> Bool {
        let prefix = admin ? adminPrefix : appPrefix
        guard text.hasPrefix(prefix) else { return false }
        let rest = text.utf8.dropFirst(prefix.utf8.count)
        return rest.count == 12 && rest.allSatisfy(Self.isHex)
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}
