import Synchronization

/// The jobs of a batch still being worked on, whose leases are renewed.
final class HeldJobs: Sendable {
    private let jobs: Mutex<Set<Int64>>

    init(_ ids: Set<Int64>) {
        jobs = Mutex(ids)
    }

    var ids: [Int64] {
        jobs.withLock { Array($0) }
    }

    func remove(_ ids: [Int64]) {
        jobs.withLock { $0.subtract(ids) }
    }
}
