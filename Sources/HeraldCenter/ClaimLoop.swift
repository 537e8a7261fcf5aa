import NIOConcurrencyHelpers

/// Works on claimed items with at most `width` in flight, each in a task of its own: more
/// are claimed as soon as enough slots free up and every `pollInterval`, never after a
/// whole batch. So one slow or hung item (a receiver that never answers) holds its own slot
/// and no other. A failed claim is reported and tried again on the next poll; the loop
/// only ends when its task is cancelled.
struct ClaimLoop<Item: Sendable>: Sendable {
    /// Items in flight at most.
    let width: Int
    /// Free slots that trigger a claim before the next poll (1: claim whenever one frees).
    let refill: Int
    let pollInterval: Duration
    /// Claims up to the given number of items.
    let claim: @Sendable (Int) async throws -> [Item]
    /// Works on one item; it reports its own failures.
    let work: @Sendable (Item) async -> Void
    /// A claim failed (the loop goes on).
    let failed: @Sendable (any Error) -> Void

    init(
        width: Int,
        refill: Int = 1,
        pollInterval: Duration,
        claimDeadline: Duration = .seconds(10),
        claim: @escaping @Sendable (Int) async throws -> [Item],
        work: @escaping @Sendable (Item) async -> Void,
        failed: @escaping @Sendable (any Error) -> Void
    ) {
        self.width = max(1, width)
        self.refill = min(max(1, refill), max(1, width))
        self.pollInterval = pollInterval
        self.claimDeadline = claimDeadline
        self.claim = claim
        self.work = work
        self.failed = failed
    }

    /// How long a claim may take. A query cut off by PostgreSQL going away has been seen
    /// never to end, even after PostgreSQL was back, and not to end when cancelled either
    /// (postgres-nio 1.33): awaited, it stopped the loop for good. The loop gives up on it
    /// and claims again; what such a claim took, if it ever ends, is leased and comes back
    /// (a webhook leased to this node that it isn't sending to is claimed again at once, an
    /// SMS or a callback request when its lease runs out).
    let claimDeadline: Duration

    struct TimedOut: Error {}

    /// `operation`'s result, or ``TimedOut`` after `timeout` without waiting for it to end:
    /// for a call that may never return and ignores cancellation. The abandoned call is
    /// cancelled and left to end by itself, in an unstructured task: structured
    /// concurrency would wait for it.
    static func abandoning<Result: Sendable>(
        after timeout: Duration,
        _ operation: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        let pending = NIOLockedValueBox<CheckedContinuation<Result, any Error>?>(nil)
        let tasks = NIOLockedValueBox<[Task<Void, Never>]>([])
        @Sendable func finish(_ result: Swift.Result<Result, any Error>) {
            let continuation = pending.withLockedValue { value in
                defer { value = nil }
                return value
            }
            guard let continuation else { return }
            continuation.resume(with: result)
            for task in tasks.withLockedValue({ $0 }) { task.cancel() }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                pending.withLockedValue { $0 = continuation }
                let work = Task {
                    do {
                        finish(.success(try await operation()))
                    } catch {
                        finish(.failure(error))
                    }
                }
                let timer = Task {
                    try? await Task.sleep(for: timeout)
                    finish(.failure(TimedOut()))
                }
                tasks.withLockedValue { $0 = [work, timer] }
            }
        } onCancel: {
            finish(.failure(CancellationError()))
        }
    }

    private enum Event: Sendable {
        case finished
        case poll
    }

    func run() async {
        await withTaskGroup(of: Event.self) { group in
            var inFlight = 0
            var polling = false
            var claimNow = true
            while !Task.isCancelled {
                if claimNow, inFlight < width {
                    do {
                        let items = try await Self.abandoning(after: claimDeadline) { [claim, width, inFlight] in
                            try await claim(width - inFlight)
                        }
                        for item in items {
                            group.addTask {
                                await work(item)
                                return .finished
                            }
                        }
                        inFlight += items.count
                    } catch {
                        if Task.isCancelled { break }
                        failed(error)
                    }
                }
                if !polling {
                    polling = true
                    group.addTask {
                        try? await Task.sleep(for: pollInterval)
                        return .poll
                    }
                }
                guard let event = await group.next() else { break }
                switch event {
                case .finished:
                    inFlight -= 1
                    claimNow = width - inFlight >= refill
                case .poll:
                    polling = false
                    claimNow = true
                }
            }
            group.cancelAll()
        }
    }
}
