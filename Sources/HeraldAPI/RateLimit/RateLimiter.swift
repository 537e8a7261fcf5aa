import HeraldCore
import HeraldStore
import Logging
import NIOConcurrencyHelpers

/// The rate limits of this node's push endpoints: one ``LocalRateBucket`` per limited app,
/// taking tokens from the app's bucket in PostgreSQL, which every node shares. At most one
/// take per app is in flight; requests that need tokens meanwhile wait for it.
final class RateLimiter: Sendable {
    enum Decision: Sendable, Equatable {
        /// The app has no limit: no headers.
        case unlimited
        case admitted(RateLimitHeaders)
        case refused(RateLimitHeaders, retryAfter: Duration)
    }

    private struct State {
        var buckets: [Int64: LocalRateBucket<ContinuousClock.Instant>] = [:]
        var takes: [Int64: Task<Decision, Never>] = [:]
        /// Requests of each app waiting for its take: the next take is at least as large,
        /// so that a burst is served by one statement, not one each.
        var waiting: [Int64: Int] = [:]
    }

    private let state = NIOLockedValueBox(State())
    private let store: APIStore
    private let configuration: RateLimitConfiguration
    private let logger: Logger

    init(store: APIStore, configuration: RateLimitConfiguration, logger: Logger) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
    }

    /// The app's limit a minute: its own, else the node's default; 0 is none.
    func perMinute(_ app: AppRecord) -> Int {
        app.rateLimitPerMinute ?? configuration.defaultPerMinute
    }

    /// Admits a request of `app`, or refuses it. When the database cannot be asked, the
    /// request is admitted (the push it carries needs the database anyway, and answers
    /// 503 by itself): the limit protects the service, and a refusal would say nothing true.
    func admit(_ app: AppRecord) async -> Decision {
        let perMinute = perMinute(app)
        if perMinute == 0 { return .unlimited }
        // Until the bucket answers: each round spends a token the node holds, waits for the
        // take in flight, or takes (enough for the requests waiting too). A take records its
        // answer in the bucket and leaves `takes` before it completes, so a request that
        // waited on it finds the answer, never the finished take again.
        while true {
            let step = state.withLockedValue { state -> Step in
                if let take = state.takes[app.id] {
                    state.waiting[app.id, default: 0] += 1
                    return .wait(take)
                }
                var bucket = state.buckets[app.id] ?? LocalRateBucket()
                let admission = bucket.admit(now: .now, perMinute: perMinute, configuration: configuration.bucket)
                state.buckets[app.id] = bucket
                switch admission {
                case .admitted(let headers): return .done(.admitted(headers))
                case .refused(let headers, let wait): return .done(.refused(headers, retryAfter: wait))
                case .take(let base, let returning):
                    let want = min(configuration.bucket.maxTake, max(base, state.waiting[app.id, default: 0] + 1))
                    let task = Task { [self] in await take(app: app.id, perMinute: perMinute, want: want, returning: returning) }
                    state.takes[app.id] = task
                    return .take(task)
                }
            }
            switch step {
            case .done(let decision): return decision
            case .take(let take): return await take.value
            case .wait(let take):
                _ = await take.value
                state.withLockedValue { state in
                    state.waiting[app.id, default: 1] -= 1
                    if state.waiting[app.id] == 0 { state.waiting[app.id] = nil }
                }
            }
        }
    }

    /// The headers for an answer to `app` that spends nothing (a route that isn't
    /// limited), from what this node knows of the bucket; nil when the app has no limit.
    func headers(_ app: AppRecord) -> RateLimitHeaders? {
        let perMinute = perMinute(app)
        guard perMinute > 0 else { return nil }
        return state.withLockedValue { state in
            (state.buckets[app.id] ?? LocalRateBucket()).peek(now: .now, perMinute: perMinute)
        }
    }

    /// Takes tokens from the shared bucket, records the answer in the node's bucket, and
    /// returns the decision for the request that asked (it spends the first token).
    private func take(app: Int64, perMinute: Int, want: Int, returning: Int) async -> Decision {
        let taken: RateTokens?
        do {
            taken = try await store.takeRateTokens(appID: app, perMinute: perMinute, want: want, returned: returning)
        } catch {
            logger.warning("rate limit: could not take tokens; admitting", metadata: ["error": "\(error)"])
            taken = nil
        }
        return state.withLockedValue { state in
            state.takes[app] = nil
            guard let taken else { return .unlimited }
            var bucket = state.buckets[app] ?? LocalRateBucket()
            let admission = bucket.took(taken, now: .now, perMinute: perMinute)
            state.buckets[app] = bucket
            if state.buckets.count > configuration.capacity { state.buckets = [app: bucket] }
            switch admission {
            case .admitted(let headers): return .admitted(headers)
            case .refused(let headers, let wait): return .refused(headers, retryAfter: wait)
            case .take: return .unlimited
            }
        }
    }

    private enum Step {
        case done(Decision)
        case wait(Task<Decision, Never>)
        case take(Task<Decision, Never>)
    }
}

/// Settings of the push endpoints' rate limits.
public struct RateLimitConfiguration: Sendable {
    /// The limit of push requests a minute of an app that has none of its own (0: none).
    public var defaultPerMinute = 0
    var bucket = LocalRateBucket<ContinuousClock.Instant>.Configuration()
    /// Apps whose shares the node keeps at most (it forgets them all beyond).
    var capacity = 100_000

    public init(defaultPerMinute: Int = 0) {
        self.defaultPerMinute = defaultPerMinute
    }
}
