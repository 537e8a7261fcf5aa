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
/// without progress the renewal stops with ``JobStalled``: the work is cancelled and
/// abandoned (``abandoning(_:when:)``: the stuck statement ignores the cancellation), the
/// jobs are given back, and another worker takes them over from their cursors.
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

    /// How long work may stand still once the node is stopping: its jobs are given back
    /// then, rather than holding the shutdown for the whole stall limit. Longer than an
    /// APNs request's deadline (10 s), so a copy APNs may still take is not given back.
    static let shutdownStall: Duration = .seconds(15)

    /// Throws ``JobStalled`` (logged) when the work hasn't moved for the stall limit, or
    /// for ``shutdownStall`` while `stopping`.
    func checkProgress(lease: Duration, stopping: Bool = false, logger: Logger) throws {
        let still = sinceProgress
        let limit = stopping ? min(Self.shutdownStall, Self.stallLimit(lease: lease)) : Self.stallLimit(lease: lease)
        guard still > limit else { return }
        logger.error(
            stopping ? "stopping: a job's work has not moved; giving its jobs back" : "a job's work has not moved; giving its jobs back",
            metadata: ["herald.jobs": "\(ids)", "herald.stalled_s": "\(Int(still.components.seconds))"]
        )
        throw JobStalled()
    }
}

/// The work on a job stood still past ``HeldJobs/stallLimit(lease:)``.
struct JobStalled: Error {}
