import HeraldStore
import Logging

/// Whether PostgreSQL accepts a connection at all, asked of a fresh connection, not the
/// pool (whose queue is what a request is stuck in when the database is down).
///
/// One check runs at a time and its answer is kept for a second, so a thousand waiting
/// requests cost one connection attempt. A check cut short by cancellation answers
/// "reachable": only a real refusal may fail a request.
actor DatabaseReachability {
    private let url: DatabaseURL
    private let timeout: Duration
    private let logger: Logger
    private var last: (at: ContinuousClock.Instant, reachable: Bool)?
    private var waiting: [CheckedContinuation<Bool, Never>]?

    init(url: DatabaseURL, timeout: Duration = .seconds(2), logger: Logger) {
        self.url = url
        self.timeout = timeout
        self.logger = logger
    }

    func isReachable() async -> Bool {
        if let last, last.at.duration(to: .now) < .seconds(1) { return last.reachable }
        if waiting != nil {
            return await withCheckedContinuation { waiting?.append($0) }
        }
        waiting = []
        var reachable: Bool
        do {
            try await DatabaseProbe.withConnection(to: url, timeout: timeout, logger: logger) { _ in }
            reachable = true
        } catch {
            reachable = false
            logger.warning("the database does not accept connections", metadata: ["error": "\(error)"])
        }
        if Task.isCancelled {
            reachable = true
        } else {
            last = (.now, reachable)
        }
        let waiters = waiting ?? []
        waiting = nil
        for waiter in waiters { waiter.resume(returning: reachable) }
        return reachable
    }
}
