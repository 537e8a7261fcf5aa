import CoreMetrics
import Foundation
import HeraldCore
import HeraldStore
import Logging
import NIOCore

extension PushJobRunner {
    /// Runs fresh push jobs claimed together, so that most pushes (a few devices each)
    /// share their commits: their messages are read with one query; pushes to explicit
    /// lists of devices are fanned out whole in one statement, the others' first batches
    /// in one transaction; all are routed together (one gateway call for their copies over
    /// the MQTT connection), their outcomes recorded with one statement and the jobs
    /// finished with one more. A job whose audience fills its
    /// first batch goes on alone from its cursor, batch by batch.
    ///
    /// Throws when the batch could not be fanned out or recorded; the caller gives the
    /// jobs back (a finished job is gone, a routed copy is no longer pending, so running
    /// a job again neither loses nor repeats a copy). Returns the jobs it stopped early
    /// (shutdown), to be given back.
    func runFresh(_ jobs: [PushJob], stopping: @escaping @Sendable () -> Bool) async throws -> [PushJob] {
        let messages = try await store.messages(ids: jobs.map(\.messageID))
        var finished = jobs.filter { messages[$0.messageID] == nil }
        // A spread push goes its own way, with its lease renewed while it fans out.
        let spread = jobs.filter { messages[$0.messageID]?.push.path.isSpread == true }
        let live = jobs.compactMap { job in
            messages[job.messageID].flatMap { $0.push.path.isSpread ? nil : (job: job, prepared: router.prepare($0)) }
        }
        var stoppedSpread: [PushJob] = []
        for job in spread where try await !run(job, stopping: stopping) { stoppedSpread.append(job) }
        let work = live.map { FanOutWork(job: $0.job, message: $0.prepared.message, payload: $0.prepared.storedPayload) }
        // A push the app's controls apply to goes batch by batch, each copy checked.
        let explicit = work.filter { $0.message.push.path.fansOutExplicitly && !$0.message.isDeliveryControlled }
        var batches = try await store.fanOutExplicit(explicit)
        let complete = Set(batches.keys)
        try await batches.merge(
            store.fanOutFirstBatches(
                work.filter { !$0.message.push.path.fansOutExplicitly || $0.message.isDeliveryControlled },
                limit: configuration.batchSize,
                node: configuration.nodeID,
                lease: configuration.lease
            ),
            uniquingKeysWith: { first, _ in first }
        )
        var small: [RoutableFanOut] = []
        var large: [RoutableFanOut] = []
        for (job, prepared) in live {
            guard let batch = batches[job.id], let targets = batch else {
                finished.append(job)  // recalled or replaced before it went out
                continue
            }
            metrics.fannedOut.increment(by: targets.count)
            do {
                try await faults.afterBatch(prepared.message.msgID, 1)
            } catch is CenterFaults.WorkerDied {
                continue  // abandoned, lease held, as a killed worker would leave it
            }
            let fanOut = RoutableFanOut(job: job, prepared: prepared, targets: targets)
            if complete.contains(job.id) || targets.count < configuration.batchSize {
                small.append(fanOut)
            } else {
                large.append(fanOut)
            }
        }
        // Jobs leave the renewal as they finish: a finished job's lease can't be renewed,
        // which read as "taken over" while a large fan-out outlasted a third of the lease.
        let held = HeldJobs(Set((small + large).map(\.job.id)))
        let (smallFanOuts, largeFanOuts, finishedJobs, stoppedJobs) = (small, large, finished, stoppedSpread)
        return try await whileLeased(held, stopping: stopping) {
            let small = smallFanOuts
            let large = largeFanOuts
            let unfinished = try await withThrowingTaskGroup(of: PushJob?.self) { group in
                for fanOut in large {
                    group.addTask {
                        try await router.route(fanOut.prepared, targets: fanOut.targets)
                        held.advanced()
                        return try await fanOutRest(fanOut.job, fanOut.prepared, batches: 1, held: held, stopping: stopping) ? nil : fanOut.job
                    }
                }
                try await routeAndFinish(small, finishing: finishedJobs)
                held.remove(small.map(\.job.id))
                var unfinished: [PushJob] = []
                for try await job in group {
                    held.advanced()
                    if let job { unfinished.append(job) }
                }
                return unfinished
            }
            let done = large.map(\.job).filter { job in !unfinished.contains(job) }
            try await store.finishJobs(done)
            return unfinished + stoppedJobs
        }
    }

    /// Routes pushes fanned out when they were accepted (``FannedOutPushSink``): one gateway
    /// call for their copies, then their outcomes recorded and their jobs finished in one
    /// statement, as for the small pushes of a claimed batch.
    ///
    /// Throws when the copies could not be routed or recorded; the caller gives the jobs
    /// back, and whoever takes them over routes the copies still pending.
    func runFannedOut(_ pushes: [FannedOutPush], stopping: @escaping @Sendable () -> Bool = { false }) async throws {
        var fresh: [RoutableFanOut] = []
        for push in pushes {
            metrics.fannedOut.increment(by: push.targets.count + push.routedToPeers)
            metrics.routedToPeers.increment(by: push.routedToPeers)
            do {
                try await faults.afterBatch(push.message.msgID, 1)
            } catch is CenterFaults.WorkerDied {
                continue  // abandoned, lease held, as a killed worker would leave it
            }
            fresh.append(
                RoutableFanOut(job: push.job, prepared: router.prepare(push.message, devicePayloads: push.devicePayloads), targets: push.targets)
            )
        }
        guard !fresh.isEmpty else { return }
        let routable = fresh
        try await whileLeased(HeldJobs(Set(fresh.map(\.job.id))), stopping: stopping) { try await routeAndFinish(routable, finishing: []) }
    }

    /// Runs `work` while the leases of `held` are renewed. When the renewal stops
    /// (``JobStalled``: the work stood still; ``LeaseLost``; or a failed renewal), the work
    /// is cancelled and abandoned, not awaited (``abandoning(_:when:)``: a statement cut off
    /// with its connection may never end), and the error thrown, so the caller gives the
    /// jobs back at once. What the abandoned work still does is fenced by the jobs' leases
    /// and the copies' states.
    func whileLeased<Result: Sendable>(
        _ held: HeldJobs,
        stopping: @escaping @Sendable () -> Bool,
        _ work: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        try await abandoning(work) { try await renewLeases(held, stopping: stopping) }
    }

    /// Routes whole small fan-outs together, records their outcomes, and finishes their
    /// jobs along with `finished` (jobs with nothing left to send).
    private func routeAndFinish(
        _ small: [RoutableFanOut],
        finishing finished: [PushJob]
    ) async throws {
        let routed = small.filter { !$0.targets.isEmpty }
        let updates = try await router.outcomes(of: routed.map { ($0.prepared, $0.targets) })
        try await store.recordDeliveries(
            zip(routed, updates).map { (messageID: $0.prepared.message.id, updates: $1) },
            finishing: finished + small.map(\.job)
        )
    }

    /// Keeps the leases of jobs being worked on, while the work moves. Once the node is
    /// stopping, work that hasn't moved for ``HeldJobs/shutdownStall`` is given up: a
    /// shutdown does not wait the whole stall limit on a statement that may never end.
    /// Throws ``LeaseLost`` when every job was taken over.
    private func renewLeases(_ jobs: HeldJobs, stopping: @escaping @Sendable () -> Bool) async throws {
        let renewEvery = configuration.lease / 3
        var sinceRenewal = Duration.zero
        while !Task.isCancelled {
            let step = min(.seconds(1), renewEvery)
            try await Task.sleep(for: step)
            sinceRenewal += step
            try jobs.checkProgress(lease: configuration.lease, stopping: stopping(), logger: logger)
            guard sinceRenewal >= renewEvery else { continue }
            sinceRenewal = .zero
            let jobIDs = jobs.ids
            guard !jobIDs.isEmpty else { continue }
            let held = try await store.renewLeases(jobIDs: jobIDs, node: configuration.nodeID, lease: configuration.lease)
            if held == 0 { throw LeaseLost() }
            if held < jobIDs.count {
                logger.warning("Jobs were taken over while being worked on", metadata: ["herald.jobs": "\(jobIDs.count - held)"])
            }
        }
    }
}

/// Every job of the work was taken over by another worker.
struct LeaseLost: Error {}
