import Foundation

/// The cluster benchmark's table: each figure for the cluster and for the single node, their
/// ratio, and the goal beside it (reported, never asserted).
struct ClusterResults {
    var single: ClusterRun?
    var cluster: ClusterRun?
    var options: ClusterBench.Options

    func print(setup: String) {
        say("")
        say("Herald cluster against one node (\(setup))")
        say("Each push goes through one node's API to a device connected to another node (on one node: to any device);")
        say("ratio = cluster / single node; CPU cores: herald = the nodes' processes, devices = load generators and the HTTP client")
        let clusterName = cluster?.name ?? "cluster"
        say(row("", clusterName, "1 node", "ratio", "goal"))
        let rate = Stats.format(options.rate, 0)
        say("Unicast across nodes at \(rate)/s for \(options.duration):")
        figure("accepted/s", \.steady?.acceptedPerSecond, digits: 0)
        figure("receipt p50, ms", \.steady?.p50, digits: 2)
        figure("receipt p99, ms", \.steady?.p99, digits: 2, goal: "<= 50 ms") { $0 <= 50 }
        figure("receipt max, ms", \.steady?.max, digits: 1)
        figure("PostgreSQL transactions per push", \.steady?.transactionsPerPush, digits: 1)
        copies("copies", \.steady?.count)
        cpu(\.steady?.cpuSending, "CPU while sending")
        backends(\.steady?.backendsSending, "while sending")
        checkpoints(\.steady?.checkpoints)
        say("Unicast across nodes, flat out for \(options.flatOutDuration):")
        figure("accepted/s", \.flatOut?.acceptedPerSecond, digits: 0)
        figure("delivered/s", \.flatOut?.deliveredPerSecond, digits: 0)
        figure("receipt p99, ms", \.flatOut?.p99, digits: 1)
        figure("PostgreSQL transactions per push", \.flatOut?.transactionsPerPush, digits: 1)
        copies("copies", \.flatOut?.count)
        cpu(\.flatOut?.cpuSending, "CPU while sending")
        backends(\.flatOut?.backendsSending, "while sending")
        checkpoints(\.flatOut?.checkpoints)
        let devices = cluster?.devices ?? single?.devices ?? 0
        say("Tag push to all \(devices) devices, median of \(options.tagPushes) (through node 1):")
        figure("API answer to last receipt, ms", \.medianTagPush?.answerToLast, digits: 0, goal: "<= 1500 ms") { $0 <= 1500 }
        figure("request to last receipt, ms", \.medianTagPush?.requestToLast, digits: 0)
        figure("request to median receipt, ms", \.medianTagPush?.p50, digits: 0)
        for index in 0..<max(cluster?.tagPushes.count ?? 0, single?.tagPushes.count ?? 0) {
            copies("copies, push \(index + 1)", \.tagPushes[safe: index]?.count)
        }
        checkpoints { $0.tagPushes.map(\.checkpoints).reduce(0, +) }
        say("Broadcast (audience all), \(options.broadcasts) sent together through the nodes in turn:")
        let broadcastRatio = ratio(\.broadcast?.deliveriesPerSecond)
        figure(
            "deliveries/s",
            \.broadcast?.deliveriesPerSecond,
            digits: 0,
            goal: ">= 0.8x 1 node",
            verdict: broadcastRatio.map { $0 >= 0.8 }
        )
        figure("API answer to last receipt, ms", \.broadcast?.answerToLast, digits: 0)
        copies("copies", \.broadcast?.count)
        cpu(\.broadcast?.cpu, "CPU")
        backends(\.broadcast?.backends, "until the last receipt")
        checkpoints(\.broadcast?.checkpoints)
        say("Takeover: a device on node 1 connects to node 2 (1 node: to node 1 again), until node 1 closed the old connection")
        say("and the new one is accepted; \(max(cluster?.takeovers.count ?? 0, single?.takeovers.count ?? 0)) devices, one at a time:")
        figure("p50, ms", { Self.percentile($0.takeovers, 0.5) }, digits: 1)
        figure("max, ms", { $0.takeovers.max() }, digits: 1, goal: "<= 1000 ms", met: { $0 <= 1000 })
        figure("while flat out: p50, ms", { Self.percentile($0.takeoversUnderLoad, 0.5) }, digits: 1)
        figure("while flat out: max, ms", { $0.takeoversUnderLoad.max() }, digits: 1, goal: "<= 1000 ms", met: { $0 <= 1000 })
        say("Idle, every device connected:")
        cpu(\.idle, "CPU")
        say("Lost and duplicated copies, all phases (goal: zero lost, zero duplicates beyond DUP redelivery):")
        for run in [cluster, single].compactMap({ $0 }) {
            let (lost, duplicates, redelivered) = run.copies
            let met = lost == 0 && duplicates == 0 && run.late.duplicates == 0
            say(
                "  \(run.name): \(lost) lost, \(duplicates) duplicates, \(redelivered) DUP redeliveries; late copies \(run.late.distinct) "
                    + "(\(run.late.duplicates) duplicates)  \(met ? "met" : "MISSED")"
            )
            if run.abandoned > 0 { say("  \(run.name): \(run.abandoned) jobs or routed copies still pending after a phase were deleted") }
            if !run.logProblems.isEmpty { say("  \(run.name): the nodes logged \(run.logProblems.count) warnings or errors (above)") }
        }
    }

    /// One figure of both setups, their ratio and the goal (checked against the cluster's
    /// value by `met`, or given as `verdict`).
    private func figure(
        _ label: String,
        _ value: (ClusterRun) -> Double?,
        digits: Int,
        goal: String = "",
        verdict: Bool? = nil,
        met: ((Double) -> Bool)? = nil
    ) {
        let clusterValue = cluster.flatMap(value).flatMap { $0.isNaN ? nil : $0 }
        let singleValue = single.flatMap(value).flatMap { $0.isNaN ? nil : $0 }
        guard clusterValue != nil || singleValue != nil else { return }
        var goalText = goal
        if let outcome = verdict ?? clusterValue.flatMap({ met?($0) }), !goal.isEmpty {
            goalText += outcome ? ": met" : ": MISSED"
        }
        let ratioText = clusterValue.flatMap { c in singleValue.flatMap { $0 == 0 ? nil : "\(Stats.format(c / $0, 2))x" } } ?? "-"
        say(
            row(
                "  " + label,
                clusterValue.map { Stats.format($0, digits) } ?? "-",
                singleValue.map { Stats.format($0, digits) } ?? "-",
                ratioText,
                goalText
            )
        )
    }

    private func ratio(_ path: KeyPath<ClusterRun, Double?>) -> Double? {
        guard let c = cluster?[keyPath: path], let s = single?[keyPath: path], s > 0 else { return nil }
        return c / s
    }

    /// Lost, duplicates and DUP redeliveries of both setups.
    private func copies(_ label: String, _ path: KeyPath<ClusterRun, CopyCount?>) {
        func text(_ run: ClusterRun?) -> String {
            guard let count = run?[keyPath: path] else { return "-" }
            return "\(count.lost)/\(count.copies.duplicates)/\(count.copies.redelivered)"
        }
        guard cluster?[keyPath: path] != nil || single?[keyPath: path] != nil else { return }
        say(row("  \(label): lost/dup/DUP", text(cluster), text(single), "", "0/0/any"))
    }

    private func cpu(_ path: KeyPath<ClusterRun, CPUMeter.Usage?>, _ label: String) {
        for run in [cluster, single].compactMap({ $0 }) {
            if let usage = run[keyPath: path] { say("  \(label), \(run.name): \(usage)") }
        }
    }

    private func backends(_ path: KeyPath<ClusterRun, BackendProfile?>, _ label: String) {
        for run in [cluster, single].compactMap({ $0 }) {
            if let profile = run[keyPath: path] { say("  \(label), \(run.name): \(profile)") }
        }
    }

    /// Says so when PostgreSQL started a checkpoint during a phase (it writes full pages
    /// for a while, and the phase runs slower than one without).
    private func checkpoints(_ count: (ClusterRun) -> Int?) {
        for run in [cluster, single].compactMap({ $0 }) {
            if let started = count(run), started > 0 { say("  \(run.name): PostgreSQL started \(started) checkpoints during it") }
        }
    }

    private func row(_ label: String, _ clusterValue: String, _ singleValue: String, _ ratio: String, _ goal: String) -> String {
        label.padding(toLength: 44, withPad: " ", startingAt: 0) + pad(clusterValue, 12) + pad(singleValue, 12) + pad(ratio, 9) + "   " + goal
    }

    private func pad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, max(0, Int((Double(sorted.count) * p).rounded(.up)) - 1))]
    }
}

extension Array {
    subscript(safe index: Int) -> Element? {
        indices.contains(index) ? self[index] : nil
    }
}
