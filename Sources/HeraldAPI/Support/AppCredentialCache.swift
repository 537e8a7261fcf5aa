import Foundation
import HeraldCore
import HeraldStore
import NIOConcurrencyHelpers

/// Recently verified Basic `app_key:master_secret` credentials, so a busy operator's pushes
/// don't each cost a query and a hash check, nor decoding the header. Keyed by a digest of
/// the whole `Authorization` header (the secret itself is never kept); entries live a few
/// seconds, so a deleted app stops authenticating within that time. Only successes are
/// cached.
final class AppCredentialCache: Sendable {
    private struct Entry {
        var app: AppRecord
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

    /// The app whose credentials `authorization` carries; `credentials` reads them from the
    /// header when they aren't cached (and throws when they aren't Basic credentials).
    func app(
        authorization: String,
        store: APIStore,
        credentials: (String) throws -> (appKey: String, masterSecret: String)
    ) async throws -> AppRecord? {
        let key = SecretHash.digest(authorization)
        let now = ContinuousClock.now
        if let entry = entries.withLockedValue({ $0[key] }), entry.expires > now { return entry.app }
        let (appKey, masterSecret) = try credentials(authorization)
        guard let app = try await store.authenticateApp(appKey: appKey, masterSecret: masterSecret) else { return nil }
        verified?.record(digest: key)
        entries.withLockedValue { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = Entry(app: app, expires: now + lifetime)
        }
        return app
    }
}
