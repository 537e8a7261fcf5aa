import ArgumentParser
import Foundation
import HeraldCenter
import HeraldStore
import Logging
import NIOCore
import PostgresNIO

/// `herald-bench apns-fanout`: a tag push to devices without a connection, routed by the
/// message center to APNs (the project's sandbox), until every copy's outcome is recorded.
struct APNsFanOutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns-fanout",
        abstract: "Message center to APNs: a tag push to offline iOS devices until every outcome is recorded.",
        discussion: """
            Starts Herald in this process as `herald serve` composes it (embedded durable PostgreSQL, \
            the APNs sandbox as its APNs), registers the devices without connecting them, then sends \
            tag pushes one after another and measures, for each, the time from the request until \
            every copy is recorded as handed to APNs, and the CPU it took. Take \
            /tmp/herald-bench.lock around a run (flock).
            """
    )

    @Option(help: "Offline iOS devices, all with the pushed tag.") var devices = 10_000
    @Option(help: "Tag pushes, one after another.") var pushes = 5
    @Option(help: "Fan-out workers (herald serve: center.workers).") var workers = CenterConfiguration().workers
    @Option(help: "PostgreSQL pool size (herald serve: database.poolSize).") var poolSize = 20
    @Option(help: "Seconds to wait for one push's outcomes.") var timeout = 300.0

    func validate() throws {
        guard devices > 0, pushes > 0, workers > 0, poolSize > 1 else { throw ValidationError("counts must be positive") }
    }

    func run() async throws {
        var logger = Logger(label: "herald-bench")
        logger.logLevel = .warning
        let cleanup = Cleanup()
        defer { cleanup.run() }
        let build = Stats.build
        say("herald-bench apns-fanout: \(build) build, \(devices) offline devices, \(workers) center workers, pool \(poolSize)")
        let (devices, pushes, timeout) = (self.devices, self.pushes, self.timeout)
        try await HeraldInProcess.run(.init(poolSize: poolSize, workers: workers), cleanup: cleanup, logger: logger) { herald in
            let app = try await SeededApp.seed(herald.store, count: devices, aliases: false)
            let load = try await PushLoad.connect(
                host: "127.0.0.1",
                port: herald.apiPort,
                count: 1,
                appKey: app.appKey,
                masterSecret: app.masterSecret
            )
            let rates: [Double]
            do {
                rates = try await Self.rounds(herald, app: app, load: load, devices: devices, pushes: pushes, timeout: timeout)
                await load.close()
            } catch {
                await load.close()
                throw error
            }
            let median = rates.sorted()[rates.count / 2]
            say("apns-fanout: median \(Stats.format(median)) copies/s over \(pushes) pushes of \(devices) devices")
        }
    }

    /// Waits until every copy of the latest message has an outcome (sent to APNs or failed).
    private static func waitForOutcomes(_ herald: HeraldInProcess, expected: Int, timeout: Duration) async throws -> Int {
        let deadline = ContinuousClock.now + timeout
        while true {
            let rows = try await herald.inspection.query(
                """
                SELECT count(*)::bigint FROM deliveries
                WHERE message_id = (SELECT max(id) FROM messages) AND state IN ('apns', 'failed')
                """
            )
            var count = 0
            for try await value in rows.decode(Int64.self) { count = Int(value) }
            if count >= expected { return count }
            guard ContinuousClock.now < deadline else { throw BenchError("only \(count) of \(expected) outcomes after \(timeout)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Sends `pushes` pushes to every device one after the other; each one's rate of recorded outcomes.
    private static func rounds(
        _ herald: HeraldInProcess,
        app: SeededApp,
        load: PushLoad,
        devices: Int,
        pushes: Int,
        timeout: Double
    ) async throws -> [Double] {
        let meter = CPUMeter(postmasterPIDFile: herald.postmasterPIDFile, loadPIDs: [])
        var rates: [Double] = []
        for round in 1...pushes {
            let before = meter.sample()
            let started = ContinuousClock.now
            let outcome = await load.run(count: 1, using: 1) { _, _ in
                ByteBuffer(string: #"{"audience":{"tag":["\#(app.tag)"]},"notification":{"ios":{"alert":"round \#(round)","badge":"+1"}}}"#)
            }
            guard outcome.accepted == 1 else { throw BenchError("push refused: \(outcome.firstProblem ?? "")") }
            let recorded = try await Self.waitForOutcomes(herald, expected: devices, timeout: .seconds(timeout))
            let elapsed = started.duration(to: .now)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            rates.append(Double(recorded) / seconds)
            say(
                "  push \(round): \(recorded)/\(devices) outcomes recorded in \(Stats.format(seconds * 1000)) ms "
                    + "(\(Stats.format(Double(recorded) / seconds)) copies/s); \(meter.usage(from: before, to: meter.sample()))"
            )
        }
        return rates
    }

}
