/// One tag push to every device.
struct TagPushResult: CustomStringConvertible {
    /// Request to 200, ms.
    var accepted: Double
    var received: Int
    var devices: Int
    /// Request to receipt, ms: the median device and the last.
    var p50: Double
    var last: Double
    /// Jobs of an earlier phase deleted before this one.
    var abandonedBefore: Int
    /// From the request until every receipt was collected.
    var cpu: CPUMeter.Usage
    var backends: BackendProfile

    var description: String {
        "accepted in \(Stats.format(accepted)) ms, \(received)/\(devices) received, p50 \(Stats.format(p50)) ms, last \(Stats.format(last)) ms; \(cpu); \(backends)"
    }
}

/// A run of unicast pushes.
struct UnicastResult: CustomStringConvertible {
    /// Pushes per second offered; nil: flat out.
    var offered: Double?
    var outcome: PushLoad.Outcome
    /// Request to 200, ms.
    var responseP50: Double
    var responseP99: Double
    /// Receipts while pushes were being sent, and in all.
    var receivedInWindow: Int
    var received: Int
    /// Jobs left when sending stopped.
    var backlogAtEnd: Int
    /// Receipts per second from the first request to the last receipt.
    var deliveredPerSecond: Double
    /// Request to receipt, ms.
    var p50: Double
    var p99: Double
    var max: Double
    var abandonedBefore: Int
    /// While pushes were sent, and from then until the last receipt.
    var cpuSending: CPUMeter.Usage
    var cpuAfter: CPUMeter.Usage
    var backendsSending: BackendProfile
    var backendsAfter: BackendProfile

    var acceptedPerSecond: Double { outcome.acceptedPerSecond }
    var receivedInWindowPerSecond: Double { Double(receivedInWindow) / outcome.seconds }

    var description: String {
        let accepted =
            "\(outcome.accepted)/\(outcome.sent) accepted in \(Stats.format(outcome.seconds, 2)) s (\(Stats.format(acceptedPerSecond, 0))/s)"
        let responses = "200 p50 \(Stats.format(responseP50)) ms p99 \(Stats.format(responseP99)) ms"
        let receipts =
            "received \(received) (\(receivedInWindow) while sending, backlog \(backlogAtEnd) jobs), \(Stats.format(deliveredPerSecond, 0))/s"
        let latency = "receipt p50 \(Stats.format(p50)) ms p99 \(Stats.format(p99)) ms max \(Stats.format(max)) ms"
        var text = [accepted, responses, receipts, latency, "sending: \(cpuSending), \(backendsSending)", "after: \(cpuAfter), \(backendsAfter)"]
            .joined(separator: "; ")
        if let problem = outcome.firstProblem {
            text += "; refused \(outcome.refused), failed \(outcome.failed), first: \(problem)"
        }
        return text
    }
}

/// Everything one `herald-bench push` measured, printed with the goals beside it.
struct PushResults {
    var options: PushBench.Options
    /// Five seconds with every device connected and nothing sent.
    var idle: (cpu: CPUMeter.Usage, backends: BackendProfile)?
    var tagPushes: [TagPushResult] = []
    var latency: UnicastResult?
    var single: UnicastResult?
    var flatOut: UnicastResult?
    var controls: [PushBench.ControlRun] = []

    func print(setup: String) {
        say("")
        say("Herald end to end, POST /v3/push to device receipt (\(setup))")
        if let idle { say("Idle, \(options.devices) devices connected: \(idle.cpu)") }
        if let latency {
            say("(a) Unicast at \(Stats.format(latency.offered ?? 0, 0))/s for \(options.duration), by \(options.audience.rawValue), random devices:")
            say(
                "    receipt latency p50 \(Stats.format(latency.p50, 2)) ms, p99 \(Stats.format(latency.p99, 2)) ms  (goal p99 <= 25 ms) \(verdict(latency.p99 <= 25))"
            )
            say(
                "    max \(Stats.format(latency.max, 1)) ms; \(latency.received)/\(latency.outcome.accepted) received; accepted \(Stats.format(latency.acceptedPerSecond, 0))/s"
            )
            say("    HTTP 200 in p50 \(Stats.format(latency.responseP50, 2)) ms, p99 \(Stats.format(latency.responseP99, 2)) ms\(problems(latency))")
            say("    while sending: \(latency.cpuSending)")
            say("                   \(latency.backendsSending)")
        }
        if let flatOut {
            let keptUp = flatOut.receivedInWindow >= flatOut.outcome.accepted * 95 / 100
            say("(b) Flat out over \(options.httpConnections) connections for \(options.flatOutDuration), random devices:")
            say(
                "    \(Stats.format(flatOut.acceptedPerSecond, 0)) accepted pushes/s  (goal >= 10,000/s) \(verdict(flatOut.acceptedPerSecond >= 10_000))"
            )
            say(
                "    deliveries kept up: \(keptUp ? "yes" : "no") — \(flatOut.receivedInWindow) received while sending (\(Stats.format(flatOut.receivedInWindowPerSecond, 0))/s), backlog \(flatOut.backlogAtEnd) jobs at the end"
            )
            say(
                "    \(flatOut.received)/\(flatOut.outcome.accepted) received in all, \(Stats.format(flatOut.deliveredPerSecond, 0))/s; receipt p50 \(Stats.format(flatOut.p50)) ms, p99 \(Stats.format(flatOut.p99)) ms"
            )
            say("    HTTP 200 in p50 \(Stats.format(flatOut.responseP50, 2)) ms, p99 \(Stats.format(flatOut.responseP99, 2)) ms\(problems(flatOut))")
            say("    while sending: \(flatOut.cpuSending)")
            say("                   \(flatOut.backendsSending)")
            say("    draining:      \(flatOut.cpuAfter)")
            say("                   \(flatOut.backendsAfter)")
        }
        if let single {
            say("    Single device, flat out for \(options.singleDuration):")
            say(
                "    \(Stats.format(single.acceptedPerSecond, 0)) accepted/s; \(Stats.format(single.deliveredPerSecond, 0)) delivered/s sustained to the device"
                    + "  (goal >= 10,000/s, both) \(verdict(min(single.acceptedPerSecond, single.deliveredPerSecond) >= 10_000))"
            )
            say(
                "    \(single.received)/\(single.outcome.accepted) received (\(single.receivedInWindow) while sending, backlog \(single.backlogAtEnd) jobs); receipt p50 \(Stats.format(single.p50)) ms, p99 \(Stats.format(single.p99)) ms\(problems(single))"
            )
            say("    draining: \(single.cpuAfter)")
            say("              \(single.backendsAfter)")
        }
        if !tagPushes.isEmpty {
            let complete = tagPushes.filter { $0.received == $0.devices }
            let best = complete.map(\.last).min()
            say("(c) Tag push to all \(options.devices) devices, \(tagPushes.count) times:")
            for (index, push) in tagPushes.enumerated() { say("    \(index + 1): \(push)") }
            if let best {
                let median = complete.map(\.last).sorted()[complete.count / 2]
                say(
                    "    last receipt: best \(Stats.format(best, 0)) ms, median \(Stats.format(median, 0)) ms  (goal <= 1000 ms) \(verdict(median <= 1000))"
                )
            } else {
                say("    no tag push reached every device  (goal: all within 1000 ms) MISSED")
            }
        }
        printControls()
        let abandoned = tagPushes.map(\.abandonedBefore).reduce(0, +) + [latency, single, flatOut].compactMap { $0?.abandonedBefore }.reduce(0, +)
        if abandoned > 0 { say("Note: \(abandoned) jobs of earlier phases were still pending after the drain timeout and were deleted.") }
    }

    private func verdict(_ met: Bool) -> String { met ? "met" : "MISSED" }

    private func problems(_ result: UnicastResult) -> String {
        guard let problem = result.outcome.firstProblem else { return "" }
        return
            "; not accepted: \(result.outcome.refused.map { "\($0.value)×\($0.key)" }.joined(separator: ", ")), \(result.outcome.failed) failed (\(problem))"
    }
}
