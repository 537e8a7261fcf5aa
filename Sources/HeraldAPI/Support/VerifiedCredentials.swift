import HeraldCore
import NIOConcurrencyHelpers

/// Credentials (whole `Authorization` headers, kept as digests) that authenticated lately:
/// the throttle of failed authentications lets them through an address it refuses, so one
/// misconfigured client, or a guesser, behind a shared address (a NAT) doesn't lock out the
/// clients there that have the right secret. Only what ``Authentication`` verified is
/// recorded, never a route's 200 (a route that checks no credentials would vouch for any).
/// Entries live ``lifetime`` from their last verification; at most ``capacity`` are kept.
final class VerifiedCredentials: Sendable {
    private let entries = NIOLockedValueBox<[[UInt8]: ContinuousClock.Instant]>([:])
    let lifetime: Duration
    let capacity: Int

    init(lifetime: Duration = .seconds(3600), capacity: Int = 10_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// `authorization` was just verified.
    func record(_ authorization: String) {
        record(digest: SecretHash.digest(authorization))
    }

    /// The credentials whose header digest is `digest` were just verified.
    func record(digest: [UInt8]) {
        let now = ContinuousClock.now
        entries.withLockedValue { entries in
            if entries[digest] == nil, entries.count >= capacity {
                entries = entries.filter { $0.value > now }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[digest] = now + lifetime
        }
    }

    /// Whether `authorization` authenticated within ``lifetime``.
    func contains(_ authorization: String) -> Bool {
        let digest = SecretHash.digest(authorization)
        let now = ContinuousClock.now
        return entries.withLockedValue { ($0[digest] ?? now) > now }
    }
}
