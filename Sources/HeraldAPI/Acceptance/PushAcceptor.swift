import Foundation
import HeraldCore
import HeraldStore

/// Makes accepted pushes durable with group commits.
///
/// A push is accepted when its message and job are committed. Committing each push on
/// its own costs a transaction, a NOTIFY and a WAL flush per request; under load the
/// acceptor commits every push that arrived while the previous commit was in flight in
/// one statement instead (`APIStore.acceptPushes`, through `GroupCommit`), so
/// the commit rate stays the same and each commit carries more pushes. An idle server
/// commits a lone push at once: there is no timer and no added latency.
///
/// Which pushes are group-committed, checked in the statement or fanned out at once is the
/// push's ``PushPath``. When a batch fails (for instance one push's app was deleted
/// meanwhile), each of its pushes is retried on its own, so one bad push never costs the
/// others their acceptance.
///
/// With a sink (the message center of this process), a push whose path fans out at
/// acceptance is fanned out in the same statement and handed to the center once
/// committed, in commit order; other pushes go through the queue.
public final class PushAcceptor: Sendable {
    private let store: APIStore
    private let sink: (any FannedOutPushSink)?
    private let commits: GroupCommit<PendingPush, Outcome>

    /// What became of a push in its commit.
    private enum Outcome: Sendable {
        case committed
        /// Its explicit audience names no device of the app: nothing was stored.
        case unmatched
        case failed(any Error)
    }

    public init(store: APIStore, sink: (any FannedOutPushSink)? = nil, maxBatch: Int = 500, maxConcurrentCommits: Int = 1) {
        self.store = store
        self.sink = sink
        self.commits = GroupCommit(maxBatch: maxBatch, maxConcurrentCommits: maxConcurrentCommits) { pushes in
            await Self.commit(pushes, in: store, sink: sink)
        }
    }

    /// Accepts a validated push: returns once its message and job are committed, with the
    /// audit entry of the request that sent it (if it is audited) in the same commit.
    public func accept(_ request: PushRequest, push: Push, appID: Int64, now: Date = Date()) async throws -> AcceptedPush {
        // One lookup in a set (``EventApps``): apps without events pay nothing more.
        let appRecordsEvents = await store.eventApps.recordsAll(appID)
        if push.callback != nil { store.eventApps.noteCallback(appID: appID) }
        let audit = RouteAccess.serving?.audit
        let entry = audit?.claimForCommit()
        if !push.path.isGroupCommitted {
            let accepted: AcceptedPush
            do {
                accepted = try await store.acceptPush(request, push: push, appID: appID, now: now, appRecordsEvents: appRecordsEvents, audit: entry)
            } catch {
                if entry != nil { audit?.release() }
                throw error
            }
            // A repeated cid stored nothing, its entry neither.
            if accepted.repeated, entry != nil { audit?.release() }
            if !accepted.repeated { store.remember(push, msgID: accepted.msgID) }
            return accepted
        }
        let pending = PendingPush(
            request,
            push: push,
            msgID: try await store.newMsgID(),
            appID: appID,
            now: now,
            fansOutHere: sink != nil,
            appRecordsEvents: appRecordsEvents,
            audit: entry
        )
        // Before the commit: its NOTIFY can wake the center before this task resumes. (A
        // push fanned out at acceptance is handed to the center with its Push.)
        if !pending.fansOut { store.remember(push, msgID: pending.msgID) }
        let outcome = await commits.submit(pending)
        if case .committed = outcome {} else if entry != nil { audit?.release() }
        switch outcome {
        case .committed: return AcceptedPush(msgID: pending.msgID, cid: nil, repeated: false)
        case .unmatched: throw HeraldError(.noAudienceMatch, "audience: no device of this app matches; nothing was sent")
        case .failed(let error): throw error
        }
    }

    /// Accepts the pushes of a batch single push, each with its cid (checked: no push of
    /// the app stored it in the last 24 hours, and older ones were cleared, see
    /// ``APIStore/prepareCIDs(appID:cids:now:)``). They go through the group commit
    /// together, so a thousand of them cost a few commits; a push with a replace is
    /// committed alone. One outcome per push, in order: a push that fails fails alone.
    ///
    /// A cid another request stored meanwhile answers with that request's push, as a
    /// repeated cid does.
    public func accept(
        batch: [(request: PushRequest, push: Push, cid: String)],
        appID: Int64,
        now: Date = Date()
    ) async -> [Result<AcceptedPush, any Error>] {
        await withTaskGroup(of: (Int, Result<AcceptedPush, any Error>).self) { group in
            for (index, entry) in batch.enumerated() {
                group.addTask {
                    do {
                        return (index, .success(try await self.accept(entry.request, push: entry.push, cid: entry.cid, appID: appID, now: now)))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var outcomes = [Result<AcceptedPush, any Error>?](repeating: nil, count: batch.count)
            for await (index, outcome) in group { outcomes[index] = outcome }
            return outcomes.map { $0! }
        }
    }

    private func accept(_ request: PushRequest, push: Push, cid: String, appID: Int64, now: Date) async throws -> AcceptedPush {
        var withCID = push
        withCID.cid = cid
        if push.replace != nil {
            return try await accept(request, push: withCID, appID: appID, now: now)
        }
        var grouped = push
        grouped.cid = nil
        if push.callback != nil { store.eventApps.noteCallback(appID: appID) }
        let audit = RouteAccess.serving?.audit
        let entry = audit?.claimForCommit()
        let pending = PendingPush(
            request,
            push: grouped,
            msgID: try await store.newMsgID(),
            cid: cid,
            appID: appID,
            now: now,
            fansOutHere: sink != nil,
            appRecordsEvents: await store.eventApps.recordsAll(appID),
            audit: entry
        )
        if !pending.fansOut { store.remember(grouped, msgID: pending.msgID) }
        let outcome = await commits.submit(pending)
        if case .committed = outcome {} else if entry != nil { audit?.release() }
        switch outcome {
        case .committed:
            return AcceptedPush(msgID: pending.msgID, cid: cid, repeated: false)
        case .unmatched:
            // Not stored: its cid was stored meanwhile, or its device was deleted since the
            // caller checked. The push committed alone tells which (and clears a cid that
            // went stale meanwhile).
            return try await accept(request, push: withCID, appID: appID, now: now)
        case .failed(let error):
            throw error
        }
    }

    /// One statement for the batch; on failure, each push on its own. What was fanned out
    /// goes to the local center as soon as it is committed.
    private static func commit(_ pushes: [PendingPush], in store: APIStore, sink: (any FannedOutPushSink)?) async -> [Outcome] {
        func commitAndHandOver(_ pushes: [PendingPush]) async throws -> Set<String> {
            let accepted = try await store.acceptPushes(pushes, fanningOutTo: sink)
            if let sink, !accepted.fannedOut.isEmpty { sink.receive(accepted.fannedOut) }
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
