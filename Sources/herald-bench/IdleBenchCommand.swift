import ArgumentParser
import Foundation
import HeraldStore
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// `herald-bench idle`: many idle connections, as a fleet of silent devices holds them.
///
/// One process may hold 20,000 open files here, so the connections are spread over
/// several `herald serve` nodes of one cluster (each with a load process of its own).
/// Once every device is connected and its connection parked, it prints each node's
/// resident memory per connection; then it checks a sample of the devices still receives
/// a push, and that the keepalive still closes connections gone silent: the last load
/// process is stopped (SIGSTOP), and its node must close all its connections within 1.5×
/// their keepalive while the other nodes keep theirs.
struct IdleBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle",
        abstract: "Idle connections at scale: memory per connection, a sample pushed to, silent ones closed."
    )

    @Option(help: "herald serve nodes (and load processes).") var nodes = 6
    @Option(help: "Idle connections per node (at most 19,000: open files per process).") var devicesPerNode = 16_700
    @Option(help: "The devices' keepalive, seconds (they ping twice per keepalive).") var keepAlive = 20
    @Option(help: "Devices pushed to, spread over the nodes.") var sample = 300
    @Option(help: "The herald executable (default: the one beside herald-bench).") var herald: String?

    func validate() throws {
        guard devicesPerNode <= 19_000 else { throw ValidationError("at most 19,000 connections per node (open files)") }
        guard nodes >= 2 else { throw ValidationError("at least 2 nodes: one is stopped talking") }
        guard (10...300).contains(keepAlive) else { throw ValidationError("a keepalive of 10 to 300 seconds") }
    }

    func run() async throws {
        let logger = {
            var logger = Logger(label: "herald-bench")
            logger.logLevel = .warning
            return logger
        }()
        let cleanup = Cleanup()
        defer { cleanup.run() }
        let devices = nodes * devicesPerNode
        say("herald-bench idle: \(Stats.build) build, \(nodes) nodes × \(devicesPerNode) = \(devices) idle connections, keepalive \(keepAlive) s")
        let directory = NSTemporaryDirectory() + "herald-bench-idle-\(getpid())"
        cleanup.add("remove \(directory)") { try? FileManager.default.removeItem(atPath: directory) }
        let postgres = try await EmbeddedPostgres.start(
            .init(directory: directory + "/postgres", durable: true, database: "postgres"),
            logger: logger
        )
        cleanup.add("stop PostgreSQL") { postgres.stopImmediately() }
        _ = try await DatabaseProbe.withConnection(to: postgres.url, logger: logger) { try await Migrator().migrate(on: $0, logger: logger) }
        let sql = PostgresClient(configuration: postgres.url.clientConfiguration(maximumConnections: 2), backgroundLogger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await sql.run() }
            defer { group.cancelAll() }
            try await Task.sleep(for: .milliseconds(50))
            let app = try await ClusterApp.seed(sql, devices: devices, takeovers: 0)
            let servers = try await ClusterBenchCommand.startNodes(
                nodes,
                url: postgres.url,
                directory: directory + "/nodes",
                cleanup: cleanup,
                binary: herald,
                settings: [:]
            )
            try await Task.sleep(for: .seconds(2))
            let before = servers.map { Stats.residentMemory(pid: $0.pid) }
            let started = ContinuousClock.now
            let blocks = (0..<nodes).map { node in
                (clientIDs: Array(app.registrationIDs[node * devicesPerNode..<(node + 1) * devicesPerNode]), port: servers[node].mqttPort)
            }
            let fleet = try await Fleet.start(
                groups: blocks,
                username: app.appKey,
                password: ClusterApp.deviceSecret,
                subscribe: nil,
                countCopies: true,
                keepAlive: keepAlive
            )
            cleanup.add("stop load generators") { fleet.stop() }
            try await ClusterBenchCommand.waitForSessions(sql, devices: devices, timeout: .seconds(900))
            say("  \(devices) connected and held in \(started.duration(to: .now))")

            // Idle connections park after mqtt.parkAfter (10 s by default).
            let deadline = ContinuousClock.now + .seconds(60)
            var parked = 0
            while ContinuousClock.now < deadline {
                parked = 0
                for server in servers { parked += Int(try await Self.gauge("herald_gateway_parked_connections", of: server) ?? 0) }
                if parked >= devices { break }
                try await Task.sleep(for: .seconds(1))
            }
            try await Task.sleep(for: .seconds(3))
            say("  \(parked) of \(devices) connections parked")
            say("Resident memory per idle connection, each node's growth from none to its connections")
            var total = 0
            for (index, server) in servers.enumerated() {
                let grown = Stats.residentMemory(pid: server.pid) - before[index]
                total += grown
                say(
                    "  \(server.name)  \(devicesPerNode) connections  \(Stats.format(Double(grown) / 1_048_576, 1)) MiB  \(grown / devicesPerNode) bytes"
                )
            }
            say("  all    \(devices) connections  \(Stats.format(Double(total) / 1_048_576, 1)) MiB  \(total / devices) bytes")

            try await pushToSample(app: app, servers: servers, fleet: fleet)
            try await silenceOne(fleet: fleet, servers: servers, sql: sql)
            fleet.stop()
            for server in servers { server.stop() }
            for line in ClusterBenchCommand.logProblems(servers).prefix(10) { say("  log: \(line)") }
        }
    }

    /// One push to `sample` devices spread over every node: each copy must arrive.
    private func pushToSample(app: ClusterApp, servers: [HeraldServe], fleet: Fleet) async throws {
        _ = try await fleet.receipts()
        let step = max(1, app.registrationIDs.count / sample)
        let ids = stride(from: step / 2, to: app.registrationIDs.count, by: step).prefix(sample).map { app.registrationIDs[$0] }
        let load = try await PushLoad.connect(
            host: "127.0.0.1",
            port: servers[0].httpPort,
            count: 1,
            appKey: app.appKey,
            masterSecret: app.masterSecret
        )
        let audience = ids.map { "\"\($0)\"" }.joined(separator: ",")
        let outcome = await load.run(count: 1) { _, sentAt in
            ByteBuffer(string: #"{"audience":{"registration_id":[\#(audience)]},"message":{"msg_content":"\#(WallClock.marker(sentAt))"}}"#)
        }
        await load.close()
        guard outcome.accepted == 1 else { throw BenchError("the sample push wasn't accepted: \(outcome.firstProblem ?? "?")") }
        var copies = CopyTally()
        var samples: [Int64] = []
        let deadline = ContinuousClock.now + .seconds(60)
        while copies.distinct < ids.count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(500))
            let receipts = try await fleet.receipts()
            copies.add(receipts.copies)
            samples += receipts.samples
        }
        let sorted = samples.sorted()
        say(
            "Push to \(ids.count) parked devices over \(servers.count) nodes: \(copies.distinct) received, \(copies.duplicates) duplicates, "
                + "p50 \(Stats.format(Stats.percentile(sorted, 0.5), 1)) ms, p99 \(Stats.format(Stats.percentile(sorted, 0.99), 1)) ms"
        )
        guard copies.distinct == ids.count else { throw BenchError("\(ids.count - copies.distinct) of the sample never received the push") }
    }

    /// Stops the last load process (its devices fall silent, their sockets open): its
    /// node must close all of them by their keepalive; the others keep theirs.
    private func silenceOne(fleet: Fleet, servers: [HeraldServe], sql: PostgresClient) async throws {
        let silent = fleet.processes[fleet.processes.count - 1]
        let node = servers[servers.count - 1]
        let others = try await Self.connections(on: Array(servers.dropLast()))
        kill(silent.pid, SIGSTOP)
        let stopped = ContinuousClock.now
        let limit = Duration.milliseconds(keepAlive * 1500)
        var left = Int.max
        while ContinuousClock.now < stopped + limit + .seconds(30) {
            left = Int(try await Self.gauge("herald_gateway_connections", of: node) ?? -1)
            if left == 0 { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        let took = stopped.duration(to: .now)
        kill(silent.pid, SIGCONT)
        let othersAfter = try await Self.connections(on: Array(servers.dropLast()))
        say(
            "Keepalive: \(node.name)'s \(devicesPerNode) devices stopped (SIGSTOP); \(left) connections left after \(took) "
                + "(keepalive \(keepAlive) s, closed past \(limit)); the other nodes held \(others) and hold \(othersAfter)"
        )
        try await Task.sleep(for: .seconds(1))
        let statuses = try await fleet.status()
        say("  the stopped devices, resumed: \(statuses.last!.closed) of \(statuses.last!.connected) found their connection closed")
        guard left == 0 else { throw BenchError("\(left) silent connections still open on \(node.name)") }
        guard othersAfter == others else { throw BenchError("the other nodes lost connections: \(others) → \(othersAfter)") }
    }

    private static func connections(on servers: [HeraldServe]) async throws -> Int {
        var total = 0
        for server in servers { total += Int(try await gauge("herald_gateway_connections", of: server) ?? 0) }
        return total
    }

    /// A gauge from the node's `/metrics`.
    static func gauge(_ name: String, of server: HeraldServe) async throws -> Double? {
        let http = try await HTTPConnection.connect(host: "127.0.0.1", port: server.httpPort, group: MultiThreadedEventLoopGroup.singleton)
        let response = try await http.get("/metrics")
        await http.close()
        let text = String(buffer: response.body)
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") || line.hasPrefix(name + "{") {
            return line.split(separator: " ").last.flatMap { Double($0) }
        }
        return nil
    }
}
