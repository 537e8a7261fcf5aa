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

/// Cancels one piece of work from outside its task: ``run(_:)`` runs it and cancels it when
/// ``cancel()`` is called (before or while it runs).
final class CancellationSignal: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<Void, Never>)
        case fired
    }

    private let state = NIOLockedValueBox(State.idle)

    init() {}

    func cancel() {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            defer { state = .fired }
            if case .waiting(let waiter) = state { return waiter }
            return nil
        }
        waiter?.resume()
    }

    /// Runs `work` until it ends, or until the signal fires (then `work` is cancelled).
    func run(_ work: @escaping @Sendable () async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await work() }
            group.addTask { await self.fired() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns once the signal fires or this task is cancelled.
    private func fired() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLockedValue { state -> Bool in
                    guard case .idle = state else { return true }
                    state = .waiting(waiter)
                    return false
                }
                if resumeNow { waiter.resume() }
            }
        } onCancel: {
            cancel()
        }
    }
}
