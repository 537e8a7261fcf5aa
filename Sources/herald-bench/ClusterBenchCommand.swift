import ArgumentParser
import Foundation
import HeraldStore
import Logging
import PostgresNIO

/// `herald-bench cluster`: Herald as a cluster of `herald serve` processes on one
/// PostgreSQL, against one node with the same devices, in the same run.
struct ClusterBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "Cluster benchmark: pushes routed across herald serve nodes, against a single node.",
        discussion: """
            Starts an embedded PostgreSQL (durable) and, for each setup, a fresh database with the \
            same Linux devices (all with one tag), `herald serve` processes of this build on it (one \
            node, then the cluster), and load-generator processes holding every device's MQTT \
            connection (device block k on node k). Then measures: takeover of a device moving from \
            node 1 to node 2; tag pushes to every device; broadcasts; unicast at a steady rate and \
            flat out, each push accepted by one node for a device on another (on one node, any), \
            and the takeover again while flat out. \
            Every device counts what it receives by msg_id (lost, duplicates). Speed is reported, \
            never asserted. Take /tmp/herald-bench.lock around a run (flock).
            """
    )

    enum Phase: String, ExpressibleByArgument, CaseIterable, Sendable {
        case takeover, tag, broadcast, latency
        case flatOut = "flat-out"
    }

    enum Setup: String, ExpressibleByArgument, CaseIterable, Sendable {
        case single, cluster
    }

    @Option(help: "Nodes of the cluster (and load-generator processes in both setups).") var nodes = 3
    @Option(help: "Connected devices per node of the cluster; the single node holds them all.") var devicesPerNode = 6_000
    @Option(help: "HTTP keep-alive connections pushing, spread over the nodes.") var httpConnections = 48
    @Option(help: "Each node's API pool (herald serve: database.poolSize).") var poolSize = 10
    @Option(help: "Each node's delivery pool (herald serve: database.deliveryPoolSize).") var deliveryPoolSize = 10
    @Option(help: "Steady unicast rate, pushes per second.") var rate = 1000.0
    @Option(help: "Seconds at the steady rate.") var duration = 10.0
    @Option(help: "Seconds of unicast flat out.") var flatOutDuration = 10.0
    @Option(help: "Tag pushes to every device, one after another.") var tagPushes = 3
    @Option(help: "Broadcasts (audience all) sent together.") var broadcasts = 3
    @Option(help: "Devices moved from node 1 to node 2, one after another.") var takeovers = 20
    @Option(help: "Milliseconds a device stays on node 1, once its session is held there, before it moves.") var takeoverSettle = 0
    @Option(help: "Seconds to wait for a phase's copies, and for the work it left.") var drainTimeout = 60.0
    @Option(help: "The herald executable (default: the one beside herald-bench).") var herald: String?
    @Option(parsing: .upToNextOption, help: "Setups to run, each after the other.") var setups: [Setup] = Setup.allCases
    @Option(parsing: .upToNextOption, help: "Phases to run.") var phases: [Phase] = Phase.allCases

    func validate() throws {
        guard nodes > 1, devicesPerNode > 0, httpConnections > 0, poolSize > 1, deliveryPoolSize > 1, rate > 0 else {
            throw ValidationError("counts and rates must be positive, and a cluster has 2 nodes or more")
        }
        // The single node holds every connection, in a process limited to 20,000 open files.
        guard nodes * devicesPerNode <= 19_000 else { throw ValidationError("at most 19,000 devices in all (open files of the single node)") }
    }

    func run() async throws {
        do {
            try await measure()
        } catch {
            FileHandle.standardError.write(Data("herald-bench cluster failed: \(String(reflecting: error))\n".utf8))
            throw error
        }
    }

    private func measure() async throws {
        var logger = Logger(label: "herald-bench")
        logger.logLevel = .warning
        let cleanup = Cleanup()
        defer { cleanup.run() }
        let build = Stats.build
        let setup = """
            \(build) build, \(nodes) nodes of \(devicesPerNode) devices against 1 node of \(nodes * devicesPerNode), \
            \(nodes) load processes, \(httpConnections) HTTP connections, pools \(poolSize)+\(deliveryPoolSize) per node, \
            PostgreSQL durable (embedded), \(ProcessInfo.processInfo.activeProcessorCount) cores
            """
        say("herald-bench cluster: \(setup)")
        let directory = NSTemporaryDirectory() + "herald-bench-cluster-\(getpid())"
        cleanup.add("remove \(directory)") { try? FileManager.default.removeItem(atPath: directory) }
        let postgres = try await EmbeddedPostgres.start(
            .init(directory: directory + "/postgres", durable: true, database: "postgres"),
            logger: logger
        )
        cleanup.add("stop PostgreSQL") { postgres.stopImmediately() }
        var runs: [ClusterRun] = []
        for setup in setups {
            let nodeCount = setup == .single ? 1 : nodes
            say("\(nodeCount == 1 ? "1 node" : "\(nodeCount) nodes"), \(nodes * devicesPerNode) devices")
            runs.append(try await run(setup, nodes: nodeCount, postgres: postgres, root: directory, cleanup: cleanup, logger: logger))
        }
        ClusterResults(single: runs.first { $0.nodes == 1 }, cluster: runs.first { $0.nodes > 1 }, options: options).print(setup: setup)
    }

    var options: ClusterBench.Options {
        ClusterBench.Options(
            devicesPerNode: devicesPerNode,
            rate: rate,
            duration: .seconds(duration),
            flatOutDuration: .seconds(flatOutDuration),
            tagPushes: tagPushes,
            broadcasts: broadcasts,
            takeoverSettle: .milliseconds(takeoverSettle),
            drainTimeout: .seconds(drainTimeout),
            phases: Set(phases)
        )
    }

    /// One setup on a database of its own: seeded, its nodes started (their files under
    /// `root`/setup), every device connected; the phases; then everything stopped.
    private func run(
        _ setup: Setup,
        nodes nodeCount: Int,
        postgres: EmbeddedPostgres,
        root: String,
        cleanup: Cleanup,
        logger: Logger
    ) async throws
        -> ClusterRun
    {
        let database = "herald_\(setup.rawValue)"
        try await DatabaseProbe.withConnection(to: postgres.url, logger: logger) { connection in
            _ = try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(database)"), logger: logger)
        }
        let url = postgres.url.with(database: database)
        _ = try await DatabaseProbe.withConnection(to: url, logger: logger) { try await Migrator().migrate(on: $0, logger: logger) }
        let sql = PostgresClient(configuration: url.clientConfiguration(maximumConnections: 2), backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await sql.run() }
            defer { group.cancelAll() }
            try await Task.sleep(for: .milliseconds(50))  // the client runs before it is used
            var started = ContinuousClock.now
            let devices = self.nodes * devicesPerNode
            let app = try await ClusterApp.seed(sql, devices: devices, takeovers: phases.contains(.takeover) ? takeovers : 0)
            say("  \(devices) devices (and \(app.takeoverIDs.count) to move) inserted in \(started.duration(to: .now))")
            let servers = try await startNodes(nodeCount, url: url, directory: root + "/" + setup.rawValue, cleanup: cleanup)
            started = .now
            // Device block k (one load process each) on node k of the cluster; all on the single node.
            let blocks = (0..<self.nodes).map { block in
                (
                    clientIDs: Array(app.registrationIDs[block * devicesPerNode..<(block + 1) * devicesPerNode]),
                    port: servers[block % nodeCount].mqttPort
                )
            }
            let fleet = try await Fleet.start(
                groups: blocks,
                username: app.appKey,
                password: ClusterApp.deviceSecret,
                subscribe: nil,
                countCopies: true
            )
            cleanup.add("stop load generators") { fleet.stop() }
            try await waitForSessions(sql, devices: devices, nodes: servers)
            say("  \(devices) devices connected and held in \(started.duration(to: .now))")
            try await sql.waitUntilQuiet()
            try await sql.query("VACUUM ANALYZE")
            let load = try await PushLoad.connect(
                host: "127.0.0.1",
                ports: servers.map(\.httpPort),
                count: httpConnections,
                appKey: app.appKey,
                masterSecret: app.masterSecret
            )
            let meter = CPUMeter(
                postmasterPIDFile: root + "/postgres/data/postmaster.pid",
                loadPIDs: fleet.processes.map(\.pid) + [getpid()],
                heraldPIDs: servers.map(\.pid)
            )
            let bench = ClusterBench(nodes: servers, app: app, fleet: fleet, load: load, sql: sql, meter: meter, options: options)
            let result: Result<ClusterRun, any Error>
            do {
                result = .success(try await bench.run(name: nodeCount == 1 ? "1 node" : "\(nodeCount) nodes"))
            } catch {
                result = .failure(error)
            }
            await load.close()
            fleet.stop()
            // The nodes record the disconnects before they are told to stop.
            try? await sql.waitUntilQuiet(limit: .seconds(30))
            for server in servers { server.stop() }
            var run = try result.get()
            run.logProblems = Self.logProblems(servers)
            for line in run.logProblems.prefix(10) { say("  log: \(line)") }
            return run
        }
    }

    /// Starts the nodes (node-1…) together on `url` and waits until each is ready.
    private func startNodes(_ count: Int, url: DatabaseURL, directory: String, cleanup: Cleanup) async throws -> [HeraldServe] {
        try await Self.startNodes(
            count,
            url: url,
            directory: directory,
            cleanup: cleanup,
            binary: herald,
            settings: ["HERALD_DATABASE_POOL_SIZE": "\(poolSize)", "HERALD_DATABASE_DELIVERY_POOL_SIZE": "\(deliveryPoolSize)"]
        )
    }

    /// Starts `count` nodes of `binary` (default: beside herald-bench) with `settings`.
    static func startNodes(
        _ count: Int,
        url: DatabaseURL,
        directory: String,
        cleanup: Cleanup,
        binary: String?,
        settings: [String: String]
    ) async throws -> [HeraldServe] {
        let ports = try await HeraldServe.freePorts(2 * count)
        let shared = HeraldServe.Shared(
            binary: binary ?? HeraldServe.defaultBinary,
            databaseURL: url,
            directory: directory,
            adminToken: "cluster-bench-admin-token-\(getpid())",
            keyEncryptionKey: Data(repeating: 7, count: 32).base64EncodedString(),
            settings: settings
        )
        var servers: [HeraldServe] = []
        for index in 0..<count {
            let server = try HeraldServe(name: "node-\(index + 1)", ports: (ports[2 * index], ports[2 * index + 1]), shared: shared)
            cleanup.add("kill \(server.name)") { server.killImmediately() }
            servers.append(server)
        }
        for server in servers { try await server.waitUntilReady(adminToken: shared.adminToken) }
        return servers
    }

    /// Waits until every device's session names the node its connection is on.
    private func waitForSessions(_ sql: PostgresClient, devices: Int, nodes: [HeraldServe]) async throws {
        try await Self.waitForSessions(sql, devices: devices)
    }

    /// Waits until `devices` sessions name a node (`timeout` at most).
    static func waitForSessions(_ sql: PostgresClient, devices: Int, timeout: Duration = .seconds(120)) async throws {
        let deadline = ContinuousClock.now + timeout
        var held: [String: Int] = [:]
        while ContinuousClock.now < deadline {
            held = [:]
            let rows = try await sql.query("SELECT node_id, count(*) FROM device_sessions WHERE node_id IS NOT NULL GROUP BY node_id")
            for try await (node, count) in rows.decode((String, Int64).self) { held[node] = Int(count) }
            if held.values.reduce(0, +) >= devices { return }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw BenchError("sessions held after \(timeout): \(held), expected \(devices) in all")
    }

    /// The warnings and errors in the nodes' logs, by node.
    static func logProblems(_ servers: [HeraldServe]) -> [String] {
        servers.flatMap { server in
            let text = (try? String(contentsOfFile: server.log, encoding: .utf8)) ?? ""
            return text.split(separator: "\n")
                .filter { line in [" warning ", " error ", " critical "].contains { line.contains($0) } }
                .map { "\(server.name): \($0.prefix(400))" }
        }
    }
}
