import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

/// `{"name", "scopes": [...], "allowed_ranges"?: ["10.0.0.0/8", ...], "expires_at"?}`.
struct KeyRequest: Decodable {
    var name: String
    var scopes: [String]?
    var allowedRanges: [String]?
    var expiresAt: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, scopes
        case allowedRanges = "allowed_ranges"
        case expiresAt = "expires_at"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        scopes = try container.decodeIfGiven([String].self, forKey: .scopes)
        allowedRanges = try container.decodeIfGiven([String].self, forKey: .allowedRanges)
        expiresAt = try container.decodeIfGiven(String.self, forKey: .expiresAt)
    }

    static let maxNameBytes = 100
    static let maxRanges = 32

    /// The key to make; an admin key takes no scopes (it is the whole admin API).
    func validated(admin: Bool) throws(HeraldError) -> APIKeySpec {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, name.utf8.count <= Self.maxNameBytes,
            !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw .invalidField("name", "1 to \(Self.maxNameBytes) bytes, not only spaces, no control characters")
        }
        var granted: [Scope] = []
        if admin {
            guard scopes == nil else { throw .invalidField("scopes", "an admin key holds the whole admin API: give no scopes") }
        } else {
            guard let scopes, !scopes.isEmpty else {
                throw .invalidField("scopes", "at least one of \(Scope.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            for (index, text) in scopes.enumerated() {
                guard let scope = Scope(rawValue: text) else {
                    throw .invalidField("scopes[\(index)]", "must be one of \(Scope.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                if !granted.contains(scope) { granted.append(scope) }
            }
        }
        var ranges: [IPRange]?
        if let allowedRanges {
            guard (1...Self.maxRanges).contains(allowedRanges.count) else {
                throw .invalidField("allowed_ranges", "1 to \(Self.maxRanges) ranges, or leave it out for any address")
            }
            ranges = try allowedRanges.enumerated().map { (index, text) throws(HeraldError) in
                guard let range = IPRange(text) else {
                    throw .invalidField("allowed_ranges[\(index)]", "an address or a CIDR range (10.0.0.0/8, 2001:db8::/32)")
                }
                return range
            }
        }
        return APIKeySpec(name: name, scopes: granted.sorted(), allowedRanges: ranges, expiresAt: try Self.expiry(expiresAt))
    }

    /// An expiry in the future, as RFC 3339.
    static func expiry(_ text: String?) throws(HeraldError) -> Date? {
        guard let text else { return nil }
        guard let date = ReceiptsRequest.rfc3339(text) else {
            throw .invalidField("expires_at", "must be an ISO 8601 time with a zone, e.g. 2027-01-01T00:00:00Z")
        }
        guard date > Date() else { throw .invalidField("expires_at", "must be in the future") }
        return date
    }
}

/// `POST …/rotate`'s optional body: `{"expires_at"?}` for the new key.
struct RotateKeyRequest: Decodable {
    var expiresAt: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case expiresAt = "expires_at"
    }

    init(from decoder: any Decoder) throws {
        expiresAt = try decoder.strictContainer(keyedBy: CodingKeys.self).decodeIfGiven(String.self, forKey: .expiresAt)
    }

    func validatedExpiry() throws(HeraldError) -> Date? { try KeyRequest.expiry(expiresAt) }
}

/// A key as the API shows it: never its secret.
struct KeyBody: ResponseEncodable {
    var keyId: String
    var name: String
    var scopes: [String]
    var allowedRanges: [String]?
    var expiresAt: Date?
    var createdAt: Date
    /// Whole days since it was made (what a rotation policy reads).
    var ageDays: Int
    var rotatedFrom: String?
    var revokedAt: Date?
    var lastUsedAt: Date?
    var lastUsedFrom: String?
    /// Whether it authenticates now: not revoked, not expired.
    var active: Bool

    init(_ key: APIKeyRecord) {
        keyId = key.keyID
        name = key.name
        scopes = key.scopes.map(\.rawValue)
        allowedRanges = key.allowedRanges?.map(\.description)
        expiresAt = key.expiresAt
        createdAt = key.createdAt
        ageDays = max(0, Int(Date().timeIntervalSince(key.createdAt) / 86_400))
        rotatedFrom = key.rotatedFrom
        revokedAt = key.revokedAt
        lastUsedAt = key.lastUsedAt
        lastUsedFrom = key.lastUsedFrom
        active = key.isUsable(at: Date())
    }

    enum CodingKeys: String, CodingKey {
        case keyId, name, scopes, allowedRanges, expiresAt, createdAt, ageDays, rotatedFrom, revokedAt, lastUsedAt, lastUsedFrom, active
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(keyId, forKey: .keyId)
        try container.encode(name, forKey: .name)
        try container.encode(scopes, forKey: .scopes)
        try container.encode(allowedRanges, forKey: .allowedRanges)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(ageDays, forKey: .ageDays)
        try container.encode(rotatedFrom, forKey: .rotatedFrom)
        try container.encode(revokedAt, forKey: .revokedAt)
        try container.encode(lastUsedAt, forKey: .lastUsedAt)
        try container.encode(lastUsedFrom, forKey: .lastUsedFrom)
        try container.encode(active, forKey: .active)
    }
}

/// A key just made, with its secret: shown this once.
struct CreatedKeyBody: ResponseEncodable {
    var key: KeyBody
    var secret: String

    init(_ created: CreatedAPIKey) {
        key = KeyBody(created.key)
        secret = created.secret
    }

    enum CodingKeys: String, CodingKey { case secret }

    func encode(to encoder: any Encoder) throws {
        try key.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(secret, forKey: .secret)
    }
}

struct KeyList: ResponseEncodable {
    var keys: [KeyBody]
}

/// `{"enabled": true|false}`: whether `app_key:master_secret` authenticates.
struct MasterSecretBody: Codable, ResponseEncodable {
    var enabled: Bool

    enum CodingKeys: String, CodingKey, CaseIterable { case enabled }

    init(enabled: Bool) { self.enabled = enabled }

    init(from decoder: any Decoder) throws {
        enabled = try decoder.strictContainer(keyedBy: CodingKeys.self).decode(Bool.self, forKey: .enabled)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(enabled, forKey: .enabled)
    }
}
