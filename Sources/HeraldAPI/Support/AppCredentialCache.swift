import Foundation
import HeraldCore
import HeraldStore
import NIOConcurrencyHelpers

/// Who an app's credentials are: the app, and the key when they are a key's, or the person
/// when they are a session's (neither: the master secret).
struct AppCaller: Sendable {
    var app: AppRecord
    var key: APIKeyRecord?
    var signedIn: SignedIn? = nil

    /// What the caller may do on the app: the key's scopes, the person's role's, or
    /// every scope (the master secret).
    var scopes: Set<Scope> {
        if let key { return Set(key.scopes) }
        if let signedIn { return signedIn.person.role(onApp: app.appKey)?.scopes ?? [] }
        return Set(Scope.allCases)
    }

    /// How the audit log and error messages name the caller.
    var actor: String {
        if let key { return "key:\(key.keyID)" }
        if let signedIn { return signedIn.actor }
        return "master_secret"
    }
}

/// A person signed in: their session and who they are.
struct SignedIn: Sendable {
    var person: Person
    var session: PersonSession

    /// `user:<email>`, as the audit log names them.
    var actor: String { "user:\(person.email)" }
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

    private struct State {
        var entries: [[UInt8]: Entry] = [:]
        /// Grows with every ``forget(keyID:)`` / ``forgetMasterSecret(appID:)``: a caller
        /// resolved before one (it may have read a key just revoked) is not cached.
        var generation = 0
    }

    private let state = NIOLockedValueBox(State())
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
        let (cached, generation) = state.withLockedValue { ($0.entries[key], $0.generation) }
        if let cached, cached.expires > now { return (cached.caller, false) }
        guard let caller = try await resolve() else { return nil }
        verified?.record(digest: key)
        state.withLockedValue { state in
            // A revocation since the read: what was read may be what was revoked.
            guard state.generation == generation else { return }
            if state.entries.count >= capacity { state.entries.removeAll(keepingCapacity: true) }
            state.entries[key] = Entry(caller: caller, expires: now + lifetime)
        }
        return (caller, true)
    }

    /// Drops every cached use of a key (it was revoked).
    func forget(keyID: String) {
        state.withLockedValue { state in
            state.generation += 1
            state.entries = state.entries.filter { $0.value.caller.key?.keyID != keyID }
        }
    }

    /// Drops every cached use of an app's master secret (it was switched off).
    func forgetMasterSecret(appID: Int64) {
        state.withLockedValue { state in
            state.generation += 1
            state.entries = state.entries.filter { $0.value.caller.key != nil || $0.value.caller.app.id != appID }
        }
    }
}
