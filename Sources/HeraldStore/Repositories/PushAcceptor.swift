import Foundation
import HeraldCore
import NIOConcurrencyHelpers

/// Makes accepted pushes durable with group commits.
///
/// A push is accepted when its message and job are committed. Committing each push on
/// its own costs a transaction, a NOTIFY and a WAL flush per request; under load the
/// acceptor commits every push that arrived while the previous commit was in flight in
/// one statement instead (``HeraldStore/acceptPushes(_:)``, through ``GroupCommit``), so
/// the commit rate stays the same and each commit carries more pushes. An idle server
/// commits a lone push at once: there is no timer and no added latency.
///
/// A push to explicit registration ids or aliases is checked to reach a device in the
/// same statement (a no_audience_match error otherwise); the caller checks
/// other audiences before. A push with a cid or a replace takes the one-at-a-time path: both read and lock
/// earlier messages of the app, which a batch can't do for one of its members. When a
/// batch fails (for instance one push's app was deleted meanwhile), each of its pushes is
/// retried on its own, so one bad push never costs the others their acceptance.
///
/// With a ``LocalFanOut`` (the center runs in this process), a push to a short explicit
/// list of devices is fanned out in the same statement and handed to the center once
/// committed, in commit order; other pushes go through the queue.
public final class PushAcceptor: Sendable {
    private let store: HeraldStore
    private let local: LocalFanOut?
    private let commits: GroupCommit<PendingPush, Outcome>

    /// What became of a push in its commit.
    private enum Outcome: Sendable {
        case committed
        /// Its explicit audience names no device of the app: nothing was stored.
        case unmatched
        case failed(any Error)
    }

    public init(store: HeraldStore, local: LocalFanOut? = nil, maxBatch: Int = 500, maxConcurrentCommits: Int = 1) {
        self.store = store
        self.local = local
        self.commits = GroupCommit(maxBatch: maxBatch, maxConcurrentCommits: maxConcurrentCommits) { pushes in
            await Self.commit(pushes, in: store, local: local)
        }
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
        let pending = PendingPush(request, push: push, appID: appID, now: now, local: local)
        // Before the commit: its NOTIFY can wake the center before this task resumes. (A
        // push fanned out at acceptance is handed to the center with its Push.)
        if !pending.fansOut { store.recentPushes.remember(push, msgID: pending.msgID) }
        switch await commits.submit(pending) {
        case .committed: return AcceptedPush(msgID: pending.msgID, cid: nil, repeated: false)
        case .unmatched: throw HeraldError(.noAudienceMatch, "audience: no device of this app matches; nothing was sent")
        case .failed(let error): throw error
        }
    }

    /// One statement for the batch; on failure, each push on its own. What was fanned out
    /// goes to the local center as soon as it is committed.
    private static func commit(_ pushes: [PendingPush], in store: HeraldStore, local: LocalFanOut?) async -> [Outcome] {
        func commitAndHandOver(_ pushes: [PendingPush]) async throws -> Set<String> {
            let accepted = try await store.acceptPushes(pushes, local: local)
            if let local, !accepted.fannedOut.isEmpty { local.receive(accepted.fannedOut) }
            return accepted.stored
        }
        do {
            let stored = try await commitAndHandOver(pushes)
            return pushes.map { stored.contains($0.msgID) ? .committed : .unmatched }
        } catch {
            guard pushes.count > 1 else { return [.failed(error)] }
        }
        var outcomes: [Outcome] = []
        for push in pushes {
            do {
                outcomes.append(try await commitAndHandOver([push]).isEmpty ? .unmatched : .committed)
            } catch {
                outcomes.append(.failed(error))
            }
        }
        return outcomes
    }
}
