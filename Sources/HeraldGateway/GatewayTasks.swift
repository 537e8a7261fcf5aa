import NIOConcurrencyHelpers

/// The gateway's work off the event loops (checking credentials, reading inboxes): each is
/// a child task of the gateway's ``Gateway/run()``, so none outlives it. A handler hands
/// work over with ``submit(_:)``; work its connection may give up on (a credentials check
/// past its time limit) carries a ``CancellationSignal``.
final class GatewayTasks: Sendable {
    private struct Item: Sendable {
        var work: @Sendable () async -> Void
        var signal: CancellationSignal?
    }

    private let items: AsyncStream<Item>
    private let continuation: AsyncStream<Item>.Continuation

    init() {
        (items, continuation) = AsyncStream.makeStream()
    }

    /// Runs `work` as a child of the gateway's task group; cancelled when `signal` fires.
    /// Dropped once the gateway has stopped.
    func submit(cancelledBy signal: CancellationSignal? = nil, _ work: @escaping @Sendable () async -> Void) {
        continuation.yield(Item(work: work, signal: signal))
    }

    /// Runs the work handed over until ``finish()``, then waits for what is running.
    func run() async {
        await withDiscardingTaskGroup { group in
            for await item in items {
                group.addTask {
                    if let signal = item.signal { await signal.run(item.work) } else { await item.work() }
                }
            }
        }
    }

    /// No more work is taken.
    func finish() {
        continuation.finish()
    }
}

/// Cancels one piece of work from outside its task: the work's task registers itself while
/// it runs (``run(_:)``), and ``cancel()`` cancels it then, or makes it skip its work if it
/// hasn't started. No task is added for this: a credentials check is one child task, as a
/// connect storm of thousands of checks needs.
final class CancellationSignal: Sendable {
    private enum State {
        case idle
        /// The work's task, while it runs: valid until `run` clears it, under the lock.
        case running(UnsafeCurrentTask)
        case cancelled
        case finished
    }

    // UnsafeCurrentTask isn't Sendable; it is only touched under this lock, and only while
    // its task is inside `run`.
    private nonisolated(unsafe) let state = NIOLockedValueBox(State.idle)

    init() {}

    func cancel() {
        state.withLockedValue { state in
            switch state {
            case .idle: state = .cancelled
            case .running(let task): task.cancel()
            case .cancelled, .finished: break
            }
        }
    }

    /// Runs `work` in the current task, cancelling that task if ``cancel()`` comes while it
    /// runs; skips it if ``cancel()`` came before.
    func run(_ work: @Sendable () async -> Void) async {
        let start = withUnsafeCurrentTask { task -> Bool in
            state.withLockedValue { state in
                guard case .idle = state, let task else { return false }
                state = .running(task)
                return true
            }
        }
        guard start else { return }
        await work()
        state.withLockedValue { $0 = .finished }
    }
}
