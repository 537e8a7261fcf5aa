import Foundation
import NIOCore
import PostgresNIO

/// The phases of the cluster benchmark against one setup: `herald serve` nodes on one
/// database, every device connected (device block `k` to node `k % nodes`), HTTP
/// connections spread over the nodes' APIs. Takeover first (on a quiet system), then the
/// fan-outs, unicast at a steady rate, and flat out last (a backlog it leaves behind
/// disturbs nothing after it), with the takeover's moves made again meanwhile.
struct ClusterBench: Sendable {
    struct Options: Sendable {
        var devicesPerNode: Int
        var rate: Double
        var duration: Duration
        var flatOutDuration: Duration
        var tagPushes: Int
        var broadcasts: Int
        /// How long a device stays on node 1 (once its session is held there) before it moves.
        var takeoverSettle: Duration
        var drainTimeout: Duration
        var phases: Set<ClusterBenchCommand.Phase>
    }

    let nodes: [HeraldServe]
    let app: ClusterApp
    let fleet: Fleet
    let load: PushLoad
    let sql: PostgresClient
    let meter: CPUMeter
    let options: Options

    var devices: Int { app.registrationIDs.count }

    func run(name: String) async throws -> ClusterRun {
        var run = ClusterRun(name: name, nodes: nodes.count, devices: devices)
        // Each setup starts with the WAL written out, so a checkpoint the setup before made
        // due doesn't start in its phases; each phase says whether one started all the same.
        try await sql.checkpoint()
        try await warmUp()
        let idleStart = meter.sample()
        try await Task.sleep(for: .seconds(5))
        run.idle = meter.usage(from: idleStart, to: meter.sample())
        say("  idle for 5 s: \(run.idle!)")
        if options.phases.contains(.takeover), !app.takeoverIDs.isEmpty {
            run.takeovers = try await takeovers()
            let sorted = run.takeovers.sorted()
            say("  takeover: \(sorted.count) moves, p50 \(Stats.format(sorted[sorted.count / 2], 1)) ms, max \(Stats.format(sorted.last!, 1)) ms")
        }
        if options.phases.contains(.tag) {
            for index in 0..<options.tagPushes {
                try await drain(into: &run)
                let push = try await fanOut(count: 1, body: tagBody)
                say("  tag push \(index + 1): \(push)")
                run.tagPushes.append(push)
            }
        }
        if options.phases.contains(.broadcast), options.broadcasts > 0 {
            try await drain(into: &run)
            run.broadcast = try await fanOut(count: options.broadcasts, body: broadcastBody)
            say("  \(options.broadcasts) broadcasts: \(run.broadcast!)")
        }
        if options.phases.contains(.latency) {
            try await drain(into: &run)
            run.steady = try await unicast(rate: options.rate, duration: options.duration)
            say("  steady: \(run.steady!)")
        }
        if options.phases.contains(.flatOut) {
            try await drain(into: &run)
            // The same moves again, a second into the load: takeover on busy nodes.
            let moving = options.phases.contains(.takeover) && !app.takeoverIDs.isEmpty
            async let moves = movesUnderLoad(moving ? app.takeoverIDs : [])
            run.flatOut = try await unicast(rate: nil, duration: options.flatOutDuration)
            run.takeoversUnderLoad = try await moves
            say("  flat out: \(run.flatOut!)")
            let sorted = run.takeoversUnderLoad.sorted()
            if !sorted.isEmpty {
                say("  takeover while flat out: p50 \(Stats.format(sorted[sorted.count / 2], 1)) ms, max \(Stats.format(sorted.last!, 1)) ms")
            }
        }
        return run
    }

    /// A few unicast pushes through every node, so connections, caches and prepared
    /// statements are warm; says so when devices don't receive them all.
    private func warmUp() async throws {
        let outcome = await load.run(count: 300, rate: 300, body: unicastBody)
        guard outcome.accepted > 0 else { throw BenchError("warm-up: no push accepted; \(outcome.firstProblem ?? "")") }
        let receipts = try await collect(expected: outcome.accepted)
        if outcome.accepted < 300 || receipts.copies.distinct < outcome.accepted {
            say("  warm-up: \(outcome.accepted)/300 pushes accepted, \(receipts.copies.distinct) received \(outcome.firstProblem ?? "")")
        }
        var ignored = ClusterRun(name: "", nodes: 0, devices: 0)
        try await drain(into: &ignored)
    }

    private func movesUnderLoad(_ devices: [String]) async throws -> [Double] {
        guard !devices.isEmpty else { return [] }
        try await Task.sleep(for: .seconds(1))
        return try await takeovers()
    }

    /// Moves of the takeover app's devices from the first node to the second (on a single
    /// node, to itself), one at a time; ms each.
    private func takeovers() async throws -> [Double] {
        let probe = TakeoverProbe(
            sql: sql,
            username: app.takeoverAppKey,
            password: ClusterApp.deviceSecret,
            settle: options.takeoverSettle,
            timeout: .seconds(10)
        )
        let (from, to) = (nodes[0], nodes[min(1, nodes.count - 1)])
        var samples: [Double] = []
        for registrationID in app.takeoverIDs {
            let move = try await probe.measure(registrationID, fromPort: from.mqttPort, fromNode: from.name, toPort: to.mqttPort)
            let took = max(move.accepted, move.closed)
            samples.append(took.milliseconds)
            if took > .milliseconds(100) {
                say(
                    "  slow takeover of \(registrationID): accepted after \(Stats.format(move.accepted.milliseconds, 1)) ms, "
                        + "old connection closed after \(Stats.format(move.closed.milliseconds, 1)) ms"
                )
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return samples
    }

    /// `count` pushes to every device, sent together over as many connections (so over
    /// the nodes in turn); waits for every copy.
    private func fanOut(count: Int, body: @escaping @Sendable (Int64) -> ByteBuffer) async throws -> ClusterFanOut {
        let before = meter.sample()
        let checkpointsBefore = try await sql.checkpointsStarted()
        let ((outcome, receipts), backends) = try await BackendProfile.sampling(sql) {
            let outcome = await load.run(count: count, using: count) { _, _, sentAt in body(sentAt) }
            guard outcome.accepted > 0 else { throw BenchError("push to every device refused: \(outcome.firstProblem ?? "")") }
            return (outcome, try await collect(expected: devices * outcome.accepted))
        }
        let cpu = meter.usage(from: before, to: meter.sample())
        let checkpoints = try await sql.checkpointsStarted() - checkpointsBefore
        let sorted = receipts.samples.sorted()
        let received = receipts.copies.distinct > 0
        return ClusterFanOut(
            pushes: outcome.accepted,
            count: CopyCount(expected: devices * outcome.accepted, copies: receipts.copies),
            answerToLast: received ? Double(receipts.lastReceipt - outcome.finished) / 1e6 : .nan,
            requestToLast: received ? Double(receipts.lastReceipt - outcome.started) / 1e6 : .nan,
            p50: Stats.percentile(sorted, 0.5),
            deliveriesPerSecond: received ? Double(receipts.copies.distinct) / (Double(max(receipts.lastReceipt - outcome.started, 1)) / 1e9) : 0,
            cpu: cpu,
            backends: backends,
            checkpoints: Int(checkpoints)
        )
    }

    /// Unicast pushes paced at `rate` (or flat out) for `duration`, then every copy.
    private func unicast(rate: Double?, duration: Duration) async throws -> ClusterUnicast {
        say("  sending \(rate.map { "\(Stats.format($0, 0))/s" } ?? "flat out") for \(duration)")
        let before = meter.sample()
        let transactionsBefore = try await transactions()
        let checkpointsBefore = try await sql.checkpointsStarted()
        let (load, body) = (self.load, unicastBody)
        let (outcome, backends) = try await BackendProfile.sampling(sql) { await load.run(duration: duration, rate: rate, body: body) }
        let sent = meter.sample()
        let receipts = try await collect(expected: outcome.accepted)
        let transactions = try await transactions() - transactionsBefore
        let checkpoints = try await sql.checkpointsStarted() - checkpointsBefore
        let latencies = receipts.samples.sorted()
        let received = receipts.copies.distinct > 0
        return ClusterUnicast(
            offered: rate,
            outcome: outcome,
            count: CopyCount(expected: outcome.accepted, copies: receipts.copies),
            p50: Stats.percentile(latencies, 0.5),
            p99: Stats.percentile(latencies, 0.99),
            max: Double(latencies.last ?? 0) / 1e6,
            deliveredPerSecond: received ? Double(receipts.copies.distinct) / (Double(max(receipts.lastReceipt - outcome.started, 1)) / 1e9) : 0,
            cpuSending: meter.usage(from: before, to: sent),
            backendsSending: backends,
            transactionsPerPush: Double(transactions) / Double(max(outcome.accepted, 1)),
            checkpoints: Int(checkpoints)
        )
    }

    /// A push from connection `slot` (to node `slot % nodes`) for a random device
    /// connected to another node; on a single node, for any device.
    private var unicastBody: @Sendable (Int, Int, Int64) -> ByteBuffer {
        let ids = app.registrationIDs
        let (nodeCount, perNode, devices) = (nodes.count, options.devicesPerNode, devices)
        return { slot, _, sentAt in
            let device =
                nodeCount == 1
                ? Int.random(in: 0..<devices) : ((slot % nodeCount + 1) * perNode + Int.random(in: 0..<(devices - perNode))) % devices
            var body = ByteBuffer()
            body.reserveCapacity(128)
            body.writeStaticString(#"{"audience":{"registration_id":[""#)
            body.writeString(ids[device])
            body.writeStaticString(#""]},"message":{"msg_content":""#)
            WallClock.writeMarker(sentAt, into: &body)
            body.writeStaticString(#""}}"#)
            return body
        }
    }

    private var tagBody: @Sendable (Int64) -> ByteBuffer {
        let tag = app.tag
        return { sentAt in
            ByteBuffer(string: #"{"audience":{"tag":["\#(tag)"]},"message":{"msg_content":"\#(WallClock.marker(sentAt))"}}"#)
        }
    }

    private var broadcastBody: @Sendable (Int64) -> ByteBuffer {
        { sentAt in ByteBuffer(string: #"{"audience":"all","message":{"msg_content":"\#(WallClock.marker(sentAt))"}}"#) }
    }

    /// Receipts until the devices hold `expected` copies (or nothing came for 10 s, or the
    /// drain timeout passed), then half a second more for duplicates right behind.
    private func collect(expected: Int) async throws -> (samples: [Int64], lastReceipt: Int64, copies: CopyTally) {
        var samples: [Int64] = []
        var last: Int64 = 0
        var copies = CopyTally()
        let deadline = ContinuousClock.now + options.drainTimeout
        var quietSince = ContinuousClock.now
        func take() async throws {
            let receipts = try await fleet.receipts()
            if receipts.copies != CopyTally() || !receipts.samples.isEmpty { quietSince = .now }
            samples += receipts.samples
            last = max(last, receipts.lastReceipt)
            copies.add(receipts.copies)
        }
        while copies.distinct < expected, ContinuousClock.now < deadline, ContinuousClock.now - quietSince < .seconds(10) {
            try await Task.sleep(for: .milliseconds(100))
            try await take()
        }
        try await Task.sleep(for: .milliseconds(500))
        try await take()
        return (samples, last, copies)
    }

    /// Waits until no push job and no routed copy is left (at most the drain timeout) and
    /// the database is quiet, then takes the receipts still being reported (copies of the
    /// phase before that came late, counted in `run.late`). What is left after the timeout
    /// is deleted so the next phase measures itself, and counted in `run.abandoned`.
    private func drain(into run: inout ClusterRun) async throws {
        let deadline = ContinuousClock.now + options.drainTimeout
        var pending = try await pendingWork()
        while pending > 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            pending = try await pendingWork()
        }
        if pending > 0 {
            say("  \(pending) jobs and routed copies still pending after \(options.drainTimeout); deleting them")
            try await sql.query("DELETE FROM push_jobs")
            try await sql.query("DELETE FROM node_routes")
            try await Task.sleep(for: .seconds(2))
        }
        try await sql.waitUntilQuiet(limit: .seconds(10))
        let late = try await fleet.receipts().copies
        if late != CopyTally() { say("  late, after the phase before: \(late)") }
        run.late.add(late)
        run.abandoned += pending
    }

    /// Transactions committed in the database so far (each statement outside a
    /// transaction counts as one), the benchmark's own looks included.
    private func transactions() async throws -> Int {
        let rows = try await sql.query("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    /// Push jobs and node_routes rows.
    private func pendingWork() async throws -> Int {
        let rows = try await sql.query("SELECT (SELECT count(*) FROM push_jobs) + (SELECT count(*) FROM node_routes)")
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }
}

extension Duration {
    var milliseconds: Double { Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15 }
}
