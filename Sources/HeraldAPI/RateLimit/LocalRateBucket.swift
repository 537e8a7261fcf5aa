import HeraldCore
import HeraldStore

/// A node's share of one app's rate limit: the tokens it took from the app's bucket in
/// PostgreSQL (``APIStore/takeRateTokens(appID:perMinute:want:returned:)``), which it
/// spends on requests without asking the database again.
///
/// A state machine: ``admit(now:perMinute:)`` spends a token, or says to take more (giving
/// back the ones kept past ``Configuration/lifetime``, so an idle node does not sit on a
/// share of the bucket), or refuses while the bucket is known to be empty, without a
/// statement, until it has refilled one token. Tokens are only ever spent after the
/// database granted them, so the nodes together never admit more than the bucket held.
struct LocalRateBucket<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    struct Configuration: Sendable {
        /// How long a node keeps tokens it took before giving back those it did not spend.
        var lifetime: Duration = .seconds(1)
        /// Tokens taken at once: this fraction of the limit, at least 1 and at most
        /// ``maxTake``.
        var takeFraction = 0.05
        var maxTake = 100
    }

    enum Admission: Equatable {
        /// Spend one of the node's tokens; `remaining` is what the node knows is left.
        case admitted(RateLimitHeaders)
        /// Take up to `want` tokens from the shared bucket, giving back `returning`.
        case take(want: Int, returning: Int)
        /// The bucket was empty when last asked and has not refilled a token yet.
        case refused(RateLimitHeaders, retryAfter: Duration)
    }

    private(set) var tokens = 0
    private var takenAt: Instant?
    /// What the shared bucket held after this node's last take.
    private var sharedRemaining = 0.0
    private var sharedAt: Instant?
    /// When the bucket, empty at the last take, has a whole token again.
    private var emptyUntil: Instant?

    mutating func admit(now: Instant, perMinute: Int, configuration: Configuration) -> Admission {
        if let takenAt, tokens > 0, takenAt.duration(to: now) < configuration.lifetime {
            tokens -= 1
            return .admitted(headers(now: now, perMinute: perMinute))
        }
        if let emptyUntil, now < emptyUntil {
            return .refused(headers(now: now, perMinute: perMinute), retryAfter: now.duration(to: emptyUntil))
        }
        let returning = tokens
        tokens = 0
        takenAt = nil
        let want = min(configuration.maxTake, max(1, Int(Double(perMinute) * configuration.takeFraction)))
        return .take(want: want, returning: returning)
    }

    /// The shared bucket's answer to a take asked at `now`; the request that asked spends
    /// the first granted token, if any.
    mutating func took(_ taken: RateTokens, now: Instant, perMinute: Int) -> Admission {
        sharedRemaining = taken.remaining
        sharedAt = now
        guard taken.granted > 0, perMinute > 0 else {
            let missing = max(0, 1 - taken.remaining)
            let wait = Duration.seconds(max(0.001, missing * 60 / Double(max(perMinute, 1))))
            emptyUntil = now.advanced(by: wait)
            return .refused(headers(now: now, perMinute: perMinute), retryAfter: wait)
        }
        emptyUntil = nil
        tokens = taken.granted - 1
        takenAt = now
        return .admitted(headers(now: now, perMinute: perMinute))
    }

    /// The headers of an answer that spends no token (a route that isn't limited): as
    /// ``headers(now:perMinute:)``, and a full bucket when this node never took from it.
    func peek(now: Instant, perMinute: Int) -> RateLimitHeaders {
        guard sharedAt != nil || tokens > 0 else { return RateLimitHeaders(limit: perMinute, remaining: perMinute, reset: 0) }
        return headers(now: now, perMinute: perMinute)
    }

    /// JPush's headers: the limit a minute, what is left (the shared bucket as last seen,
    /// refilled since, plus this node's tokens) and the seconds until the bucket is full.
    private func headers(now: Instant, perMinute: Int) -> RateLimitHeaders {
        let refilled = sharedAt.map { Double($0.duration(to: now).timeInterval) * Double(perMinute) / 60 } ?? 0
        let left = min(Double(perMinute), max(0, sharedRemaining + refilled) + Double(tokens))
        let reset = perMinute > 0 ? ((Double(perMinute) - left) * 60 / Double(perMinute)).rounded(.up) : 0
        return RateLimitHeaders(limit: perMinute, remaining: Int(left.rounded(.down)), reset: Int(reset))
    }
}

/// `X-Rate-Limit-Limit`, `-Remaining` and `-Reset` (seconds), as JPush sends them.
struct RateLimitHeaders: Sendable, Hashable {
    var limit: Int
    var remaining: Int
    var reset: Int
}
