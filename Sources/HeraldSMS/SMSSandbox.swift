import Foundation
import NIOConcurrencyHelpers

/// A built-in SMS provider that sends nothing: it records what it was asked to send, as
/// the APNs sandbox does for notifications, for the embedded default and the tests. Faults
/// on demand: fail the next requests, answer slowly.
///
/// Like a real provider given a client reference, it takes an idempotency key it has seen
/// as sent again without recording a second SMS (``duplicates`` counts them).
public final class SMSSandbox: SMSProvider, Sendable {
    /// An SMS the sandbox took.
    public struct Received: Sendable, Hashable {
        public var request: SMSRequest
        public var receivedAt: Date
    }

    private struct State {
        var received: [Received] = []
        var keys: Set<String> = []
        var duplicates = 0
        var failures: [SMSOutcome] = []
        var delay: Duration = .zero
    }

    private let state = NIOLockedValueBox(State())

    public init() {}

    public func send(_ sms: SMSRequest) async -> SMSOutcome {
        let delay = state.withLockedValue { $0.delay }
        if delay > .zero { try? await Task.sleep(for: delay) }
        return state.withLockedValue { state in
            if !state.failures.isEmpty { return state.failures.removeFirst() }
            if state.keys.insert(sms.idempotencyKey).inserted {
                state.received.append(Received(request: sms, receivedAt: Date()))
            } else {
                state.duplicates += 1
            }
            return .sent
        }
    }

    /// Every SMS taken, in order.
    public var received: [Received] { state.withLockedValue { $0.received } }

    /// Requests repeated with a key already taken.
    public var duplicates: Int { state.withLockedValue { $0.duplicates } }

    /// The next `count` requests fail with `outcome` (a retryable failure by default).
    public func fail(next count: Int, with outcome: SMSOutcome = .retryLater(reason: "SandboxFault")) {
        state.withLockedValue { $0.failures += Array(repeating: outcome, count: count) }
    }

    /// Every request waits `delay` before its answer.
    public func answer(after delay: Duration) {
        state.withLockedValue { $0.delay = delay }
    }

    /// No more faults: every request answered at once.
    public func answerNormally() {
        state.withLockedValue { state in
            state.failures.removeAll()
            state.delay = .zero
        }
    }

    /// Forgets what was received; returns how many.
    @discardableResult
    public func clear() -> Int {
        state.withLockedValue { state in
            defer { state.received.removeAll() }
            return state.received.count
        }
    }
}
