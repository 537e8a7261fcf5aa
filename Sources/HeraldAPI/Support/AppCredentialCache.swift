import Foundation
import HeraldCore
import HeraldStore
import NIOConcurrencyHelpers

/// Who an app's credentials are: the app, and the key when they are a key's (nil: the
/// master secret).
struct AppCaller: Sendable {
    var app: AppRecord
    var key: APIKeyRecord?
}

/// Recently verified app credentials (a master secret or a key), so a busy operator's
/// pushes don't each cost a query and a hash check, nor decoding the header. Keyed by a
/// digest of the whole `Authorization` header (the secret itself is never kept); entries
/// live a few seconds, so a deleted app stops authenticating within that time, and a
/// revoked key at once on the node that revoked it (``forget(keyID:)``). Only successes
/// are cached.
final class AppCredentialCache: Sendable {
    private struct Entry {
        var caller: AppCaller
        var expires: ContinuousClock.Instant
    }

    private let entries = NIOLockedValueBox<[[UInt8]: Entry]>([:])
    private let lifetime: Duration
    private let capacity: Int
    /// Told of every verification (not of the cache's hits).
    private let verified: VerifiedCredentials?

    init(lifetime: Duration = .seconds(5), capacity: Int = 10_000, verified: VerifiedCredentials? = nil) {
        self.lifetime = lifetime
        self.capacity = capacity
        self.verified = verified
    }

    /// The caller `authorization` names: cached, or found by `resolve` (nil: the
    /// credentials are wrong). `fresh` is true when `resolve` ran.
    func caller(authorization: String, resolve: () async throws -> AppCaller?) async throws -> (caller: AppCaller, fresh: Bool)? {
        let key = SecretHash.digest(authorization)
        let now = ContinuousClock.now
        if let entry = entries.withLockedValue({ $0[key] }), entry.expires > now { return (entry.caller, false) }
        guard let caller = try await resolve() else { return nil }
        verified?.record(digest: key)
        entries.withLockedValue { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = Entry(caller: caller, expires: now + lifetime)
        }
        return (caller, true)
    }

    /// Drops every cached use of a key (it was revoked).
    func forget(keyID: String) {
        entries.withLockedValue { entries in entries = entries.filter { $0.value.caller.key?.keyID != keyID } }
    }

    /// Drops every cached use of an app's master secret (it was switched off).
    func forgetMasterSecret(appID: Int64) {
        entries.withLockedValue { entries in entries = entries.filter { $0.value.caller.key != nil || $0.value.caller.app.id != appID } }
    }
}
