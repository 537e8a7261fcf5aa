/// What arrived of a phase's copies against what should have: every copy once.
struct CopyCount: Sendable {
    var expected: Int
    var copies: CopyTally

    var lost: Int { max(0, expected - copies.distinct) }
    /// Copies beyond those expected (a push answered with an error yet stored, or a copy of
    /// an earlier phase arriving late).
    var unexpected: Int { max(0, copies.distinct - expected) }

    var description: String {
        "\(copies.distinct)/\(expected) copies, \(lost) lost, \(copies.duplicates) duplicates, \(copies.redelivered) DUP redeliveries"
            + (unexpected > 0 ? ", \(unexpected) unexpected" : "")
    }
}

/// Unicast pushes, each through one node's API to a device connected to another node
/// (on a single node: to any device).
struct ClusterUnicast: Sendable, CustomStringConvertible {
    /// Pushes per second offered; nil: flat out.
    var offered: Double?
    var outcome: PushLoad.Outcome
    var count: CopyCount
    /// Request to receipt, ms.
    var p50: Double
    var p99: Double
    var max: Double
    /// Receipts per second from the first request to the last receipt.
    var deliveredPerSecond: Double
    var cpuSending: CPUMeter.Usage
    var backendsSending: BackendProfile
    /// PostgreSQL transactions committed per accepted push, from the first request until
    /// the last copy arrived (the benchmark's own queries, a few per second, included).
    var transactionsPerPush: Double
    /// Checkpoints PostgreSQL started from the first request until the last copy arrived.
    var checkpoints: Int

    var acceptedPerSecond: Double { outcome.acceptedPerSecond }

    var description: String {
        var text =
            "\(outcome.accepted)/\(outcome.sent) accepted (\(Stats.format(acceptedPerSecond, 0))/s); \(count.description); "
            + "\(Stats.format(deliveredPerSecond, 0)) delivered/s; receipt p50 \(Stats.format(p50)) ms p99 \(Stats.format(p99)) ms "
            + "max \(Stats.format(max)) ms; \(Stats.format(transactionsPerPush, 1)) PostgreSQL transactions per push; "
            + "sending: \(cpuSending); \(backendsSending)"
        if checkpoints > 0 { text += "; \(checkpoints) checkpoints started meanwhile" }
        if let problem = outcome.firstProblem { text += "; refused \(outcome.refused), failed \(outcome.failed), first: \(problem)" }
        return text
    }
}

/// Pushes to many devices at once (one tag push, or several broadcasts sent together).
struct ClusterFanOut: Sendable, CustomStringConvertible {
    var pushes: Int
    var count: CopyCount
    /// From the API's (last) answer to the last receipt, ms.
    var answerToLast: Double
    /// From the first request to the last receipt, ms.
    var requestToLast: Double
    /// Request to receipt of the median copy, ms.
    var p50: Double
    /// Copies received per second, from the first request to the last receipt.
    var deliveriesPerSecond: Double
    var cpu: CPUMeter.Usage
    var backends: BackendProfile
    /// Checkpoints PostgreSQL started from the first request until the last copy arrived.
    var checkpoints: Int

    var description: String {
        "\(pushes) accepted; \(count.description); answer to last receipt \(Stats.format(answerToLast, 0)) ms, "
            + "request to last \(Stats.format(requestToLast, 0)) ms, median copy \(Stats.format(p50, 0)) ms; "
            + "\(Stats.format(deliveriesPerSecond, 0)) deliveries/s; \(cpu); \(backends)"
            + (checkpoints > 0 ? "; \(checkpoints) checkpoints started meanwhile" : "")
    }
}

/// Everything one setup (one node, or the cluster) measured.
struct ClusterRun: Sendable {
    var name: String
    var nodes: Int
    var devices: Int
    var idle: CPUMeter.Usage?
    var takeovers: [Double] = []
    /// The same moves while unicast pushes flat out.
    var takeoversUnderLoad: [Double] = []
    var tagPushes: [ClusterFanOut] = []
    var broadcast: ClusterFanOut?
    var steady: ClusterUnicast?
    var flatOut: ClusterUnicast?
    /// Jobs and routed copies still pending after a drain timeout, deleted before the next phase.
    var abandoned = 0
    /// Copies that came after their phase had stopped waiting.
    var late = CopyTally()
    /// Warnings and errors the nodes logged.
    var logProblems: [String] = []

    /// The tag push that took the median time from answer to last receipt (of those that
    /// reached every device, if any did).
    var medianTagPush: ClusterFanOut? {
        let complete = tagPushes.filter { $0.count.lost == 0 }
        let pool = (complete.isEmpty ? tagPushes : complete).sorted { $0.answerToLast < $1.answerToLast }
        return pool.isEmpty ? nil : pool[pool.count / 2]
    }

    /// Copies of every phase.
    var copies: (lost: Int, duplicates: Int, redelivered: Int) {
        let counts = tagPushes.map(\.count) + [broadcast?.count, steady?.count, flatOut?.count].compactMap { $0 }
        return (
            counts.map(\.lost).reduce(0, +), counts.map(\.copies.duplicates).reduce(0, +), counts.map(\.copies.redelivered).reduce(0, +)
        )
    }
}
