import Foundation
import HeraldCore
import NIOConcurrencyHelpers

/// Makes accepted pushes durable with group commits.
///
/// A push is accepted when its message and job are committed. Committing each push on
/// its own costs a transaction, a NOTIFY and a WAL flush per request; under load the
/// acceptor commits every push that arrived while the previous commit was in flight in
/// one statement instead (``HeraldStore/acceptPushes(_:)``), so the commit rate stays the
/// same and each commit carries more pushes. An idle server commits a lone push at once:
/// there is no timer and no added latency.
///
/// There is no background task. The request that finds no commit in flight leads: it
/// commits itself with whatever is queued, answers the others, and hands the lead to the
/// oldest request still queued, whose own task then runs the next commit. At most
/// `maxConcurrentCommits` commits run at once.
///
/// A push to explicit registration ids or aliases is checked to reach a device in the
/// same statement (a no_audience_match error otherwise); the caller checks
/// other audiences before. A push with a cid or a replace takes the one-at-a-time path: both read and lock
/// earlier messages of the app, which a batch can't do for one of its members. When a
/// batch fails (for instance one push's app was deleted meanwhile), each of its pushes is
/// retried on its own, so one bad push never costs the others their acceptance.
public final class PushAcceptor: Sendable {
    private let store: HeraldStore
    private let maxBatch: Int
    private let maxConcurrentCommits: Int
    private let state = NIOLockedValueBox(State())

    private struct State {
        var queue: [Waiting] = []
        var committing = 0
    }

    private struct Waiting {
        var push: PendingPush
        var continuation: CheckedContinuation<Turn, Never>
    }

    /// What a queued request is told when it is resumed.
    private enum Turn: Sendable {
        case committed
        /// Its explicit audience names no device of the app: nothing was stored.
        case unmatched
        case failed(any Error)
        /// Its task runs the next commit.
        case lead
    }

    public init(store: HeraldStore, maxBatch: Int = 500, maxConcurrentCommits: Int = 2) {
        self.store = store
        self.maxBatch = max(1, maxBatch)
        self.maxConcurrentCommits = max(1, maxConcurrentCommits)
    }

    /// Whether ``accept(_:push:appID:now:)`` itself checks that the push's audience names a
    /// device (in the statement that stores it); for other pushes the caller checks.
    public static func checksAudience(of push: Push) -> Bool {
        isGroupCommitted(push) && HeraldStore.fansOutExplicitly(push)
    }

    /// A push with a cid or a replace takes the one-at-a-time path (see the type's notes).
    private static func isGroupCommitted(_ push: Push) -> Bool {
        push.cid == nil && push.replace == nil
    }

    /// Accepts a validated push: returns once its message and job are committed.
    public func accept(_ request: PushRequest, push: Push, appID: Int64, now: Date = Date()) async throws -> AcceptedPush {
        if !Self.isGroupCommitted(push) {
            let accepted = try await store.acceptPush(request, push: push, appID: appID, now: now)
            if !accepted.repeated { store.recentPushes.remember(push, msgID: accepted.msgID) }
            return accepted
        }
        let pending = try PendingPush(request, push: push, appID: appID, now: now)
        // Before the commit: its NOTIFY can wake the center before this task resumes.
        store.recentPushes.remember(push, msgID: pending.msgID)
        // Deciding to lead and queueing happen under one lock: a leader that finds the
        // queue empty gives its slot back under the same lock, so no push is ever queued
        // with nobody left to commit it.
        var turn = await withCheckedContinuation { continuation in
            let leads = state.withLockedValue { state in
                guard state.committing < maxConcurrentCommits else {
                    state.queue.append(Waiting(push: pending, continuation: continuation))
                    return false
                }
                state.committing += 1
                return true
            }
            if leads { continuation.resume(returning: Turn.lead) }
        }
        if case .lead = turn {
            turn = await lead(with: pending)
        }
        switch turn {
        case .committed, .lead: return AcceptedPush(msgID: pending.msgID, cid: nil, repeated: false)
        case .unmatched: throw HeraldError(.noAudienceMatch, "audience: no device of this app matches; nothing was sent")
        case .failed(let error): throw error
        }
    }

    /// Commits `own` with the queued pushes, answers them, then hands the lead on (or,
    /// when nothing is queued, gives the commit slot back). Returns `own`'s outcome.
    private func lead(with own: PendingPush) async -> Turn {
        let others = state.withLockedValue { state in
            let taken = Array(state.queue.prefix(maxBatch - 1))
            state.queue.removeFirst(taken.count)
            return taken
        }
        let outcomes = await commit([own] + others.map(\.push))
        let next = state.withLockedValue { state -> Waiting? in
            guard !state.queue.isEmpty else {
                state.committing -= 1
                return nil
            }
            return state.queue.removeFirst()
        }
        for (waiting, outcome) in zip(others, outcomes.dropFirst()) {
            waiting.continuation.resume(returning: outcome)
        }
        next?.continuation.resume(returning: .lead)
        return outcomes[0]
    }

    /// One statement for the batch; on failure, each push on its own.
    private func commit(_ pushes: [PendingPush]) async -> [Turn] {
        do {
            let stored = try await store.acceptPushes(pushes)
            return pushes.map { stored.contains($0.msgID) ? .committed : .unmatched }
        } catch {
            guard pushes.count > 1 else { return [.failed(error)] }
        }
        var outcomes: [Turn] = []
        for push in pushes {
            do {
                outcomes.append(try await store.acceptPushes([push]).isEmpty ? .unmatched : .committed)
            } catch {
                outcomes.append(.failed(error))
            }
        }
        return outcomes
    }
}
