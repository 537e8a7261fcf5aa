import DequeModule
import NIOConcurrencyHelpers

/// Group commit: items submitted while a commit is in flight are committed together by
/// the next one, so the commit rate stays the same under load and each commit carries
/// more. An idle caller commits its item at once: there is no timer and no added latency.
///
/// There is no background task. The caller that finds a commit slot free leads: it
/// commits its own item with whatever is queued, answers the others, and hands the lead
/// to the oldest caller still queued, whose own task runs the next commit. At most
/// `maxConcurrentCommits` commits run at once, each of at most `maxBatch` items.
public final class GroupCommit<Item: Sendable, Outcome: Sendable>: Sendable {
    /// Commits a batch; returns one outcome per item, in order.
    public typealias Commit = @Sendable ([Item]) async -> [Outcome]

    private let maxBatch: Int
    private let maxConcurrentCommits: Int
    private let commit: Commit
    private let state = NIOLockedValueBox(State())

    private struct State {
        var queue: Deque<Waiting> = []
        var committing = 0
    }

    private struct Waiting {
        var item: Item
        var continuation: CheckedContinuation<Turn, Never>
    }

    /// What a queued caller is told when it is resumed.
    private enum Turn: Sendable {
        case committed(Outcome)
        /// Its task runs the next commit.
        case lead
    }

    public init(maxBatch: Int, maxConcurrentCommits: Int, commit: @escaping Commit) {
        self.maxBatch = max(1, maxBatch)
        self.maxConcurrentCommits = max(1, maxConcurrentCommits)
        self.commit = commit
    }

    /// How many items wait for a commit.
    var queued: Int { state.withLockedValue { $0.queue.count } }

    /// Commits `item` (alone or with others) and returns its outcome.
    public func submit(_ item: Item) async -> Outcome {
        // Deciding to lead and queueing happen under one lock: a leader that finds the
        // queue empty gives its slot back under the same lock, so no item is ever queued
        // with nobody left to commit it.
        let turn = await withCheckedContinuation { continuation in
            let leads = state.withLockedValue { state in
                guard state.committing < maxConcurrentCommits else {
                    state.queue.append(Waiting(item: item, continuation: continuation))
                    return false
                }
                state.committing += 1
                return true
            }
            if leads { continuation.resume(returning: Turn.lead) }
        }
        switch turn {
        case .committed(let outcome): return outcome
        case .lead: return await lead(with: item)
        }
    }

    /// Commits `own` with the queued items, answers them, then hands the lead on (or,
    /// when nothing is queued, gives the commit slot back). Returns `own`'s outcome.
    private func lead(with own: Item) async -> Outcome {
        let others = state.withLockedValue { state in
            let taken = Array(state.queue.prefix(maxBatch - 1))
            state.queue.removeFirst(taken.count)
            return taken
        }
        let outcomes = await commit([own] + others.map(\.item))
        precondition(outcomes.count == others.count + 1, "a commit returns one outcome per item")
        let next = state.withLockedValue { state -> Waiting? in
            guard let next = state.queue.popFirst() else {
                state.committing -= 1
                return nil
            }
            return next
        }
        // The next commit starts before this one's callers are answered: resumed after
        // them, its task waited behind all of theirs while the database had nothing to do.
        next?.continuation.resume(returning: .lead)
        for (waiting, outcome) in zip(others, outcomes.dropFirst()) {
            waiting.continuation.resume(returning: .committed(outcome))
        }
        return outcomes[0]
    }
}
