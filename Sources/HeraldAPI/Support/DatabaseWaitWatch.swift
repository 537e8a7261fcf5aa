import NIOConcurrencyHelpers
import ServiceLifecycle

/// The requests waiting on the database, watched by one ticker instead of a timer each:
/// once a second, if any has waited `wait`, the database is asked whether it accepts a
/// connection, and if it refuses, every such request is let go (to be answered 503).
///
/// A request costs a lock and a continuation here; a timer per request cost the push path
/// about a sixth of its flat-out rate.
final class DatabaseWaitWatch: Service, Sendable {
    private struct Waiter {
        var since: ContinuousClock.Instant
        var continuation: CheckedContinuation<Void, Never>?
        /// Let go before its continuation was stored (cancelled, or the database was down).
        var released = false
    }

    private struct State {
        var nextID = 0
        var waiters: [Int: Waiter] = [:]
    }

    let wait: Duration
    private let reachability: DatabaseReachability
    private let tick: Duration
    private let state = NIOLockedValueBox(State())

    init(wait: Duration, reachability: DatabaseReachability, tick: Duration = .seconds(1)) {
        self.wait = wait
        self.reachability = reachability
        self.tick = min(tick, wait)
    }

    /// Returns when the database refused a connection after this request waited `wait`,
    /// or when the calling task is cancelled (the request was answered).
    func untilDatabaseIsDown() async {
        let id = state.withLockedValue { state in
            state.nextID &+= 1
            state.waiters[state.nextID] = Waiter(since: .now)
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLockedValue { state in
                    guard state.waiters[id]?.released == false else {
                        state.waiters[id] = nil
                        return true
                    }
                    state.waiters[id]?.continuation = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            release([id])
        }
    }

    /// Checks the database for the requests that waited long enough, once a tick, until
    /// graceful shutdown or cancellation.
    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: self.tick)
                await self.releaseIfDown()
            }
        }
    }

    private func releaseIfDown() async {
        let due = state.withLockedValue { state in
            let now = ContinuousClock.now
            return state.waiters.filter { now - $0.value.since >= wait }.map(\.key)
        }
        if !due.isEmpty, await !reachability.isReachable() { release(due) }
    }

    private func release(_ ids: [Int]) {
        let continuations = state.withLockedValue { state in
            ids.compactMap { id -> CheckedContinuation<Void, Never>? in
                guard var waiter = state.waiters[id] else { return nil }
                if let continuation = waiter.continuation {
                    state.waiters[id] = nil
                    return continuation
                }
                waiter.released = true
                state.waiters[id] = waiter
                return nil
            }
        }
        for continuation in continuations { continuation.resume() }
    }
}
