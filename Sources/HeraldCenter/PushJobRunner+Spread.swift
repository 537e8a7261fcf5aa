import CoreMetrics
import Foundation
import HeraldCore
import HeraldStore

extension PushJobRunner {
    /// Fans out a push spread over ``Push/spreadMinutes`` (JPush's `big_push_duration`):
    /// batches of about a ``CenterConfiguration/pollInterval``'s share of the audience, each
    /// when its share of the duration has come, the job parked in between
    /// (``CenterStore/parkSpread(_:done:until:node:)``) so that no worker waits on it and
    /// any node takes it up when the next batch is due. A recall or replace stops what is
    /// not fanned out yet: the next batch finds the message no longer live.
    ///
    /// Returns true when the job is finished or parked, false when it stopped early
    /// (shutdown).
    func fanOutSpread(
        _ job: PushJob,
        _ prepared: DeliveryRouter.Prepared,
        _ held: HeldJobs,
        stopping: @escaping @Sendable () -> Bool
    ) async throws -> Bool {
        let message = prepared.message
        let node = configuration.nodeID
        var total = job.spreadTotal ?? 0
        if job.spreadTotal == nil { total = try await store.startSpread(job, message: message, node: node) }
        // After a takeover, what the dead worker made counts, recorded or not.
        var done = job.attempt > 1 ? try await store.spreadCopies(messageID: message.id) : job.spreadDone
        let pace = SpreadPace(
            start: message.createdAt,
            duration: configuration.spreadMinute * (message.push.spreadMinutes ?? 0),
            total: total,
            step: configuration.pollInterval,
            maxBatch: configuration.batchSize
        )
        while true {
            if stopping() { return false }
            if let due = pace.due(after: done, now: Date()) {
                try await store.parkSpread(job, done: done, until: due, node: node)
                return true
            }
            guard
                let targets = try await store.fanOutBatch(
                    job: job,
                    message: message,
                    payload: prepared.storedPayload,
                    limit: pace.batch,
                    node: node,
                    lease: configuration.lease
                ), !targets.isEmpty
            else { break }
            metrics.fannedOut.increment(by: targets.count)
            try await router.route(prepared, targets: targets)
            held.advanced()
            done += targets.count
        }
        try await store.finishJob(job)
        return true
    }
}

/// When each batch of a spread push is due: batch k, after `done` copies of `total`, at
/// `start + duration × done / total`; each batch about a `step`'s share of the audience.
struct SpreadPace: Sendable, Hashable {
    var start: Date
    var duration: Duration
    var total: Int
    var step: Duration
    var maxBatch: Int

    /// Copies per batch: the audience's share of one step, at least 1.
    var batch: Int {
        let seconds = max(duration.timeInterval, 0.001)
        return min(maxBatch, max(1, Int((Double(total) * step.timeInterval / seconds).rounded(.up))))
    }

    /// When the batch after `done` copies is due, or nil when it is due now (within half a
    /// step: a parked job wakes within a step anyway).
    func due(after done: Int, now: Date) -> Date? {
        guard total > 0, done < total else { return nil }
        let at = start.addingTimeInterval(duration.timeInterval * Double(done) / Double(total))
        return at.timeIntervalSince(now) > step.timeInterval / 2 ? at : nil
    }
}
