import Logging
import NIOCore
import Synchronization

/// The jobs of a batch still being worked on, whose leases are renewed, and when the work
/// last moved.
///
/// A lease is renewed only while the work moves: a statement that never returns (a
/// PostgreSQL restart left postgres-nio waiting on a dead connection: a broadcast's cursor
/// stood still for minutes while its lease was renewed, and the devices past the cursor
/// never got it) would otherwise hold its jobs for good. After ``stallLimit(lease:)``
/// without progress the renewal stops with ``JobStalled``: the work is cancelled, the jobs
/// are given back, and if the stuck statement ignores the cancellation, the leases run out
/// and another worker takes the jobs over from their cursors.
final class HeldJobs: Sendable {
    private let jobs: Mutex<Set<Int64>>
    private let lastProgress: Atomic<UInt64>

    init(_ ids: Set<Int64>) {
        jobs = Mutex(ids)
        lastProgress = Atomic(NIODeadline.now().uptimeNanoseconds)
    }

    var ids: [Int64] {
        jobs.withLock { Array($0) }
    }

    func remove(_ ids: [Int64]) {
        jobs.withLock { $0.subtract(ids) }
        advanced()
    }

    /// A statement or a route of the work returned.
    func advanced() {
        lastProgress.store(NIODeadline.now().uptimeNanoseconds, ordering: .relaxed)
    }

    /// How long the work has not moved.
    var sinceProgress: Duration {
        let now = NIODeadline.now().uptimeNanoseconds
        let last = lastProgress.load(ordering: .relaxed)
        return .nanoseconds(Int64(now > last ? now - last : 0))
    }

    /// Four leases: a batch's statements and routes (acknowledgement waits, APNs requests
    /// and their retries) take well under one lease each.
    static func stallLimit(lease: Duration) -> Duration { lease * 4 }

    /// Throws ``JobStalled`` (logged) when the work hasn't moved for the stall limit.
    func checkProgress(lease: Duration, logger: Logger) throws {
        let still = sinceProgress
        guard still > Self.stallLimit(lease: lease) else { return }
        logger.error(
            "a job's work has not moved; giving its jobs back",
            metadata: ["herald.jobs": "\(ids)", "herald.stalled_s": "\(Int(still.components.seconds))"]
        )
        throw JobStalled()
    }
}

/// The work on a job stood still past ``HeldJobs/stallLimit(lease:)``.
struct JobStalled: Error {}
