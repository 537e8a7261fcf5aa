import Foundation
import HeraldCore
import HeraldStore
import NIOConcurrencyHelpers

/// Recently verified `app_key:master_secret` pairs, so a busy operator's pushes don't each
/// cost a query and a hash check. Keyed by the app key and a digest of the secret (the
/// secret itself is never kept); entries live a few seconds, so a deleted app stops
/// authenticating within that time. Only successes are cached.
final class AppCredentialCache: Sendable {
    private struct Entry {
        var app: AppRecord
        var expires: ContinuousClock.Instant
    }

    private let entries = NIOLockedValueBox<[String: Entry]>([:])
    private let lifetime: Duration
    private let capacity: Int

    init(lifetime: Duration = .seconds(5), capacity: Int = 10_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    func app(appKey: String, masterSecret: String, store: HeraldStore) async throws -> AppRecord? {
        let key = appKey + ":" + Hex.encode(SecretHash.digest(masterSecret))
        let now = ContinuousClock.now
        if let entry = entries.withLockedValue({ $0[key] }), entry.expires > now { return entry.app }
        guard let app = try await store.authenticateApp(appKey: appKey, masterSecret: masterSecret) else { return nil }
        entries.withLockedValue { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = Entry(app: app, expires: now + lifetime)
        }
        return app
    }
}
