import NIOConcurrencyHelpers

/// Works on claimed items with at most `width` in flight, each in a task of its own: more
/// are claimed as soon as enough slots free up and every `pollInterval`, never after a
/// whole batch. So one slow or hung item (a receiver that never answers) holds its own slot
/// and no other. A failed claim is reported and tried again on the next poll; the loop
/// only ends when its task is cancelled.
public struct ClaimLoop<Item: Sendable>: Sendable {
    /// Items in flight at most.
    let width: Int
    /// Free slots that trigger a claim before the next poll (1: claim whenever one frees).
    let refill: Int
    let pollInterval: Duration
    /// Claims up to the given number of items.
    let claim: @Sendable (Int) async throws -> [Item]
    /// Told of each item claimed, by the loop, before its work starts: never of what a claim
    /// the loop gave up on took.
    let taken: @Sendable (Item) -> Void
    /// Works on one item; it reports its own failures.
    let work: @Sendable (Item) async -> Void
    /// A claim failed (the loop goes on).
    let failed: @Sendable (any Error) -> Void

    public init(
        width: Int,
        refill: Int = 1,
        pollInterval: Duration,
        claimDeadline: Duration = .seconds(10),
        claim: @escaping @Sendable (Int) async throws -> [Item],
        taken: @escaping @Sendable (Item) -> Void = { _ in },
        work: @escaping @Sendable (Item) async -> Void,
        failed: @escaping @Sendable (any Error) -> Void
    ) {
        self.width = max(1, width)
        self.refill = min(max(1, refill), max(1, width))
        self.pollInterval = pollInterval
        self.claimDeadline = claimDeadline
        self.claim = claim
        self.taken = taken
        self.work = work
        self.failed = failed
    }

    /// How long a claim may take: the loop gives up on a claim that doesn't end
    /// (``abandoning(after:_:)``) and claims again; what such a claim took, if it ever ends,
    /// is leased and comes back (a webhook leased to this node that it isn't sending to is
    /// claimed again at once, an SMS or a callback request when its lease runs out).
    let claimDeadline: Duration

    private enum Event: Sendable {
        case finished
        case poll
    }

    public func run() async {
        await withTaskGroup(of: Event.self) { group in
            var inFlight = 0
            var polling = false
            var claimNow = true
            while !Task.isCancelled {
                if claimNow, inFlight < width {
                    do {
                        let items = try await abandoning(after: claimDeadline) { [claim, width, inFlight] in
                            try await claim(width - inFlight)
                        }
                        for item in items {
                            taken(item)
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
