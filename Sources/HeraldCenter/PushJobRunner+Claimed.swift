import HeraldStore
import Logging

extension PushJobRunner {
    /// The one entry point for the jobs a worker claimed. Fresh push jobs run together,
    /// sharing their commits (``runFresh(_:stopping:)``); recalls and jobs taken over from
    /// a dead worker run one by one (``run(_:stopping:)``). A job stopped by shutdown is
    /// handed back at once; a job that failed is given back to be retried shortly; a job
    /// abandoned by an injected worker death keeps its lease, as a killed worker's would.
    func run(claimed jobs: [PushJob], logger: Logger, stopping: @escaping @Sendable () -> Bool) async {
        let fresh = jobs.filter(\.isFresh)
        if !fresh.isEmpty {
            do {
                for job in try await runFresh(fresh, stopping: stopping) { await handBack(job, logger: logger) }
            } catch is CenterFaults.WorkerDied {
                logger.warning("Worker died (injected); its jobs wait for their leases to run out")
            } catch {
                logger.error("Jobs failed; retrying shortly", metadata: ["error": "\(error)", "herald.jobs": "\(fresh.count)"])
                for job in fresh { try? await store.releaseJob(job, delay: .seconds(1)) }
            }
        }
        for job in jobs where !job.isFresh {
            var logger = logger
            logger[metadataKey: "herald.job_id"] = "\(job.id)"
            do {
                if try await !run(job, stopping: stopping) { await handBack(job, logger: logger) }
            } catch is CenterFaults.WorkerDied {
                logger.warning("Worker died (injected); the job waits for its lease to run out")
            } catch {
                logger.error("Job failed; retrying shortly", metadata: ["error": "\(error)"])
                try? await store.releaseJob(job, delay: .seconds(1))
            }
        }
    }

    /// Gives a job back at shutdown, for any center to take at once.
    private func handBack(_ job: PushJob, logger: Logger) async {
        try? await store.releaseJob(job, delay: .zero)
        logger.info("Job handed back at shutdown", metadata: ["herald.job_id": "\(job.id)", "herald.job_kind": "\(job.kind.rawValue)"])
    }
}

extension PushJob {
    /// A push job claimed for the first time: nothing of it was fanned out yet.
    var isFresh: Bool { kind == .push && attempt == 1 }
}

/// A push fanned out (whole, or its first batch) and ready to route: its job, its message
/// prepared for routing, and the copies' targets.
struct RoutableFanOut: Sendable {
    var job: PushJob
    var prepared: DeliveryRouter.Prepared
    var targets: [FanOutTarget]
}
