import Foundation
import HeraldCore
import HeraldGateway
import HeraldStore
import NIOCore

/// One run of the push benchmark against a running Herald: seeds, connects the devices,
/// runs the phases (tag push first and flat out last, so a backlog a phase leaves
/// behind disturbs as little as possible), and returns what it measured.
struct PushBench: Sendable {
    struct Options: Sendable {
        var devices: Int
        var loadProcesses: Int
        var httpConnections: Int
        var rate: Double
        var duration: Duration
        var flatOutDuration: Duration
        var singleDuration: Duration
        var tagPushes: Int
        var audience: PushBenchCommand.Audience
        var credentials: PushBenchCommand.Credentials = .master
        var drainTimeout: Duration
        var phases: Set<PushBenchCommand.Phase>
    }

    let herald: HeraldInProcess
    let app: SeededApp
    let fleet: Fleet
    let load: PushLoad
    let options: Options
    let meter: CPUMeter

    static func run(_ herald: HeraldInProcess, options: Options, cleanup: Cleanup) async throws -> PushResults {
        var started = ContinuousClock.now
        let app = try await SeededApp.seed(herald.store, count: options.devices, aliases: options.audience == .alias)
        say("  \(options.devices) devices registered and tagged in \(started.duration(to: .now))")
        started = .now
        let fleet = try await Fleet.start(
            clientIDs: app.clientLines,
            processes: options.loadProcesses,
            port: herald.gatewayPort,
            username: app.appKey,
            password: nil,
            subscribe: nil
        )
        cleanup.add("stop load generators") { fleet.stop() }
        let connected = herald.gateway.connectionCount
        say("  \(connected) devices connected in \(started.duration(to: .now))")
        guard connected == options.devices else { throw BenchError("the gateway counts \(connected) connections, expected \(options.devices)") }
        let load = try await PushLoad.connect(
            host: "127.0.0.1",
            port: herald.apiPort,
            count: options.httpConnections,
            appKey: app.appKey,
            masterSecret: try await secret(for: app, options.credentials, herald)
        )
        let meter = CPUMeter(postmasterPIDFile: herald.postmasterPIDFile, loadPIDs: fleet.processes.map(\.pid))
        let bench = PushBench(herald: herald, app: app, fleet: fleet, load: load, options: options, meter: meter)
        do {
            let results = try await bench.phases()
            await load.close()
            fleet.stop()
            return results
        } catch {
            await load.close()
            fleet.stop()
            throw error
        }
    }

    private func phases() async throws -> PushResults {
        var results = PushResults(options: options)
        try await warmUp()
        let idleStart = meter.sample()
        let (_, idleBackends) = try await BackendProfile.sampling(herald) { try await Task.sleep(for: .seconds(5)) }
        results.idle = (meter.usage(from: idleStart, to: meter.sample()), idleBackends)
        say("  idle for 5 s: \(results.idle!.cpu); \(results.idle!.backends)")
        if options.phases.contains(.tag) {
            for index in 0..<options.tagPushes {
                let result = try await tagPush()
                say("  tag push \(index + 1): \(result)")
                results.tagPushes.append(result)
            }
        }
        if options.phases.contains(.latency) {
            results.latency = try await unicast(rate: options.rate, duration: options.duration, target: random)
            say("  steady: \(results.latency!)")
        }
        if options.phases.contains(.single) {
            let device = Int.random(in: 0..<options.devices)
            results.single = try await unicast(rate: nil, duration: options.singleDuration) { _ in device }
            say("  single device: \(results.single!)")
        }
        if options.phases.contains(.flatOut) {
            results.flatOut = try await unicast(rate: nil, duration: options.flatOutDuration, target: random)
            say("  flat out: \(results.flatOut!)")
        }
        if options.phases.contains(.controls) {
            results.controls = try await controls()
        }
        return results
    }

    /// A flat-out unicast phase of the controls' length, to random devices.
    func unicastForControls() async throws -> UnicastResult {
        try await unicast(rate: nil, duration: options.flatOutDuration, target: random)
    }

    private var random: @Sendable (Int) -> Int {
        let count = options.devices
        return { _ in Int.random(in: 0..<count) }
    }

    /// A few pushes through the whole path, so connections, caches and prepared
    /// statements are warm; fails clearly when devices don't receive what is pushed.
    private func warmUp() async throws {
        let outcome = await load.run(count: 200, rate: 200, body: unicastBody(random))
        guard outcome.accepted == 200 else { throw BenchError("warm-up: \(outcome.accepted) of 200 pushes accepted; \(outcome.firstProblem ?? "")") }
        let (samples, _) = try await fleet.collect(expected: 200, timeout: options.drainTimeout)
        guard samples.count == 200 else { throw BenchError("warm-up: devices received \(samples.count) of 200 pushes") }
        _ = try await drain()
    }

    /// (c) One push to the tag every device has: the time until the last device has it.
    private func tagPush() async throws -> TagPushResult {
        let abandoned = try await drain()
        let tag = app.tag
        let before = meter.sample()
        let (load, fleet, options) = (self.load, self.fleet, self.options)
        let ((outcome, samples), backends) = try await BackendProfile.sampling(herald) {
            let outcome = await load.run(count: 1, using: 1) { _, sentAt in
                ByteBuffer(string: #"{"audience":{"tag":["\#(tag)"]},"message":{"msg_content":"\#(WallClock.marker(sentAt))"}}"#)
            }
            guard outcome.accepted == 1 else { throw BenchError("tag push refused: \(outcome.firstProblem ?? "")") }
            return (outcome, try await fleet.collect(expected: options.devices, timeout: options.drainTimeout).samples)
        }
        let cpu = meter.usage(from: before, to: meter.sample())
        let sorted = samples.sorted()
        return TagPushResult(
            accepted: Double(outcome.responseTimes.first ?? 0) / 1e6,
            received: samples.count,
            devices: options.devices,
            p50: Stats.percentile(sorted, 0.5),
            last: Double(sorted.last ?? 0) / 1e6,
            abandonedBefore: abandoned,
            cpu: cpu,
            backends: backends
        )
    }

    /// Unicast pushes to `target(index)`, paced at `rate` (or flat out), for `duration`;
    /// then waits (up to the drain timeout) for the devices to receive every accepted push.
    private func unicast(rate: Double?, duration: Duration, target: @escaping @Sendable (Int) -> Int) async throws -> UnicastResult {
        let abandoned = try await drain()
        say("  sending \(rate.map { "\(Stats.format($0, 0))/s" } ?? "flat out") for \(duration)")
        let before = meter.sample()
        let (load, fleet, timeout, body) = (self.load, self.fleet, options.drainTimeout, unicastBody(target))
        let (outcome, backendsSending) = try await BackendProfile.sampling(herald) {
            await load.run(duration: duration, rate: rate, body: body)
        }
        let sent = meter.sample()
        let backlog = try await herald.pendingJobs()
        let (early, earlyReceipt) = try await fleet.report()
        let ((late, lateReceipt), backendsAfter) = try await BackendProfile.sampling(herald) {
            try await fleet.collect(expected: outcome.accepted - early.count, timeout: timeout)
        }
        let lastReceipt = max(earlyReceipt, lateReceipt)
        let received = meter.sample()
        let latencies = (early + late).sorted()
        let responses = outcome.responseTimes.sorted()
        return UnicastResult(
            offered: rate,
            outcome: outcome,
            responseP50: Stats.percentile(responses, 0.5),
            responseP99: Stats.percentile(responses, 0.99),
            receivedInWindow: early.count,
            received: latencies.count,
            backlogAtEnd: backlog,
            deliveredPerSecond: Double(latencies.count) / (Double(max(lastReceipt - outcome.started, 1)) / 1e9),
            p50: Stats.percentile(latencies, 0.5),
            p99: Stats.percentile(latencies, 0.99),
            max: Double(latencies.last ?? 0) / 1e6,
            abandonedBefore: abandoned,
            cpuSending: meter.usage(from: before, to: sent),
            cpuAfter: meter.usage(from: sent, to: received),
            backendsSending: backendsSending,
            backendsAfter: backendsAfter
        )
    }

    private func unicastBody(_ target: @escaping @Sendable (Int) -> Int) -> @Sendable (Int, Int64) -> ByteBuffer {
        let audience = options.audience
        let ids = app.registrationIDs
        let aliases = app.aliases ?? []
        // Written piece by piece into one buffer: the load generator's CPU is the server's loss.
        return { index, sentAt in
            let device = target(index)
            var body = ByteBuffer()
            body.reserveCapacity(128)
            switch audience {
            case .registrationID:
                body.writeStaticString(#"{"audience":{"registration_id":[""#)
                body.writeString(ids[device])
            case .alias:
                body.writeStaticString(#"{"audience":{"alias":[""#)
                body.writeString(aliases[device])
            }
            body.writeStaticString(#""]},"message":{"msg_content":""#)
            WallClock.writeMarker(sentAt, into: &body)
            body.writeStaticString(#""}}"#)
            return body
        }
    }

    /// Waits until the center has no job left (at most the drain timeout), then drops
    /// receipts still being reported. Jobs still there after the timeout are deleted, so
    /// the next phase measures itself; returns how many.
    private func drain() async throws -> Int {
        let deadline = ContinuousClock.now + options.drainTimeout
        var pending = try await herald.pendingJobs()
        while pending > 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            pending = try await herald.pendingJobs()
        }
        if pending > 0 {
            say("  \(pending) jobs still pending after \(options.drainTimeout); deleting them")
            try await herald.abandonJobs()
            try await Task.sleep(for: .seconds(2))
        }
        try await Task.sleep(for: .milliseconds(300))
        _ = try await fleet.report()
        return pending
    }
}

extension PushBench {
    /// The password of the pushes' Basic credentials: the master secret, or a new key's.
    static func secret(for app: SeededApp, _ credentials: PushBenchCommand.Credentials, _ herald: HeraldInProcess) async throws -> String {
        switch credentials {
        case .master:
            return app.masterSecret
        case .key:
            let spec = APIKeySpec(name: "herald-bench", scopes: [.send, .reportsRead])
            return try await herald.store.keys.create(appID: app.appID, spec).secret
        }
    }
}
