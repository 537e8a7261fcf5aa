import Crypto
import Foundation
import HeraldCore

/// One entry of the audit log: who did what, to which app, from where, with which outcome.
public struct AuditEntry: Sendable, Hashable {
    /// Microseconds since 1970.
    public var atMicroseconds: Int64
    /// The app acted on; nil for the instance (the admin API).
    public var appID: Int64?
    /// `master_secret`, `key:hk_…`, `admin_token`, `admin_key:hka_…`, `anonymous`.
    public var actor: String
    /// The route: method and path template (`POST /v3/push`).
    public var action: String
    /// The path as asked.
    public var target: String
    public var status: Int
    public var address: String?
    public var requestID: String?
    /// SHA-256 of the request body, hex.
    public var bodyDigest: String?

    public init(
        at date: Date = Date(),
        appID: Int64?,
        actor: String,
        action: String,
        target: String,
        status: Int,
        address: String?,
        requestID: String?,
        bodyDigest: String?
    ) {
        self.atMicroseconds = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        self.appID = appID
        self.actor = actor
        self.action = action
        self.target = target
        self.status = status
        self.address = address
        self.requestID = requestID
        self.bodyDigest = bodyDigest
    }

    public var at: Date { Date(timeIntervalSince1970: Double(atMicroseconds) / 1_000_000) }

    /// The entry as the statement that accepts pushes reads it (`json_to_record`), the
    /// app left out (the push's own).
    var storedJSON: String {
        var writer = JSONObjectWriter(capacity: 256)
        writer.field("at_us", Int(atMicroseconds))
        writer.field("actor", actor)
        writer.field("action", action)
        writer.field("target", target)
        writer.field("status", status)
        writer.field("address", address)
        writer.field("request_id", requestID)
        writer.field("body_digest", bodyDigest)
        return String(decoding: writer.finish(), as: UTF8.self)
    }
}

/// A stored entry, with its id and hash.
public struct StoredAuditEntry: Sendable, Hashable {
    public var id: Int64
    public var entry: AuditEntry
    public var hash: [UInt8]
    /// The app's key, when the entry is an app's and the app still exists.
    public var appKey: String? = nil
}

/// The audit log's chain: each entry's hash is SHA-256 of the previous entry's hash and the
/// entry's fields, so changing or removing one breaks the chain there. The first entry
/// follows 32 zero bytes.
public enum AuditChain {
    public static let genesis = [UInt8](repeating: 0, count: 32)

    public static func hash(previous: [UInt8], _ entry: AuditEntry) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: previous)
        let fields = [
            String(entry.atMicroseconds), entry.appID.map(String.init) ?? "", entry.actor, entry.action, entry.target,
            String(entry.status), entry.address ?? "", entry.requestID ?? "", entry.bodyDigest ?? "",
        ]
        // Each field with its length, so no two entries hash the same text.
        for field in fields {
            let bytes = Array(field.utf8)
            hasher.update(data: Array(String(bytes.count).utf8) + [0x3A] + bytes)
        }
        return Array(hasher.finalize())
    }

    /// The first entry of `entries` (in id order, after `previous`) whose hash is not its
    /// chain's; nil when all are.
    public static func firstBroken(_ entries: [StoredAuditEntry], previous: [UInt8]) -> Int64? {
        var previous = previous
        for stored in entries {
            guard hash(previous: previous, stored.entry) == stored.hash else { return stored.id }
            previous = stored.hash
        }
        return nil
    }
}
