import ArgumentParser
import Foundation
import HeraldCenter
import Logging

/// `herald-bench push`: Herald end to end, from `POST /v3/push` to the device's receipt,
/// with every device connected over MQTT from load-generator processes.
struct PushBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "End-to-end push benchmark: HTTP request to device receipt.",
        discussion: """
            Starts an embedded PostgreSQL (durable) and, in this process, the HTTP API, the gateway \
            and the message center, as `herald serve` composes them. Registers the devices, connects \
            them from load-generator processes, then measures: (a) receipt latency at a steady unicast \
            rate; (b) the highest accepted push rate over several keep-alive connections, and whether \
            deliveries keep up; the highest rate to a single device; (c) how long one tag push takes \
            to reach every device. Take /tmp/herald-bench.lock around a run (flock).
            """
    )

    enum Audience: String, ExpressibleByArgument, CaseIterable, Sendable {
        case registrationID = "registration-id"
        case alias
    }

    /// What the pushes authenticate with.
    enum Credentials: String, ExpressibleByArgument, CaseIterable, Sendable {
        /// `app_key:master_secret`.
        case master
        /// `app_key:<key>`, a key scoped to `send` and `reports:read` (issue #30).
        case key
    }

    enum Phase: String, ExpressibleByArgument, CaseIterable, Sendable {
        case latency
        case flatOut = "flat-out"
        case single, tag
        /// Flat out with the app plain, rate-limited and with callbacks, alternating.
        case controls
    }

    @Option(help: "Connected devices.") var devices = 10_000
    @Option(help: "Load-generator processes holding the device connections.") var loadProcesses = 2
    /// Flat out, each connection sends its next push when the last is answered, so this is
    /// the number of pushes in flight: 10,000 pushes/s answered in about 13 ms each need
    /// about 130 (Little's law), and 32 measured the answer time more than the capacity.
    @Option(help: "HTTP keep-alive connections pushing (= pushes in flight when flat out).") var httpConnections = 128
    @Option(help: "PostgreSQL pool size (herald serve: database.poolSize).") var poolSize = 20
    @Option(help: "Fan-out workers (herald serve: center.workers).") var workers = CenterConfiguration().workers
    @Option(help: "Devices per fan-out batch (herald serve: center.batchSize).") var batchSize = CenterConfiguration().batchSize
    @Option(help: "Seconds a request waits before the database is checked (herald serve: database.wait); 0: never checked.")
    var databaseWait = 5.0
    @Option(help: "(a) Steady unicast rate, pushes per second.") var rate = 1000.0
    @Option(help: "(a) Seconds at the steady rate.") var duration = 10.0
    @Option(help: "(b) Seconds flat out.") var flatOutDuration = 10.0
    @Option(help: "Seconds flat out to a single device.") var singleDuration = 5.0
    @Option(help: "(c) Tag pushes, one after another.") var tagPushes = 3
    @Option(help: "Unicast audience.") var audience = Audience.registrationID
    @Option(help: "What the pushes authenticate with: the master secret, or an API key scoped to send.") var credentials = Credentials.master
    @Flag(help: "Write no audit log (herald serve always writes it): to measure what it costs.") var noAudit = false
    @Option(help: "Seconds to wait for outstanding deliveries before a phase gives up on them.") var drainTimeout = 120.0
    @Option(parsing: .upToNextOption, help: "Phases to run (controls only when named).") var phases: [Phase] = Phase.allCases.filter {
        $0 != .controls
    }

    func validate() throws {
        guard devices > 0, loadProcesses > 0, httpConnections > 0, workers > 0, poolSize > 1, rate > 0, tagPushes >= 0 else {
            throw ValidationError("counts and rates must be positive")
        }
        guard devices <= loadProcesses * 19_000 else { throw ValidationError("at most 19,000 devices per load process (open files)") }
    }

    func run() async throws {
        var logger = Logger(label: "herald-bench")
        logger.logLevel = .warning
        let cleanup = Cleanup()
        defer { cleanup.run() }
        let options = PushBench.Options(
            devices: devices,
            loadProcesses: loadProcesses,
            httpConnections: httpConnections,
            rate: rate,
            duration: .seconds(duration),
            flatOutDuration: .seconds(flatOutDuration),
            singleDuration: .seconds(singleDuration),
            tagPushes: tagPushes,
            audience: audience,
            credentials: credentials,
            drainTimeout: .seconds(drainTimeout),
            phases: Set(phases)
        )
        let build = Stats.build
        let setup = """
            \(build) build, \(devices) devices over \(loadProcesses) load processes, \(httpConnections) HTTP connections, \
            PostgreSQL pool \(poolSize) (durable, embedded), \(workers) center workers, fan-out batches of \(batchSize), \
            database wait \(databaseWait > 0 ? "\(databaseWait) s" : "off"), pushes with the \(credentials == .key ? "API key" : "master secret"), audit log \(noAudit ? "off" : "on"), \
            \(ProcessInfo.processInfo.activeProcessorCount) cores
            """
        say("herald-bench push: \(setup)")
        let results = try await HeraldInProcess.run(
            .init(
                poolSize: poolSize,
                workers: workers,
                batchSize: batchSize,
                databaseWait: databaseWait > 0 ? .seconds(databaseWait) : nil,
                audit: !noAudit
            ),
            cleanup: cleanup,
            logger: logger
        ) { herald in
            try await PushBench.run(herald, options: options, cleanup: cleanup)
        }
        results.print(setup: setup)
    }
}
