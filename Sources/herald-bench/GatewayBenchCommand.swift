import ArgumentParser
import Foundation
import HeraldCore
import HeraldGateway
import HeraldStore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import ServiceLifecycle

/// `herald-bench gateway`: idle memory per connection, broadcast fan-out and unicast,
/// against Herald's gateway (deliveries through its in-process interface) and, in the
/// same run with the same load, against mosquitto as configured by default and with
/// `allow_duplicate_messages true`.
struct GatewayBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "gateway", abstract: "Gateway benchmark against mosquitto.")

    @Option(help: "Idle connections for the memory measurement.") var connections = 19_000
    @Option(help: "Connected devices for fan-out and unicast.") var devices = 10_000
    @Option(help: "Broadcasts per fan-out measurement.") var broadcasts = 10
    @Option(help: "Messages in the unicast measurement.") var unicastMessages = 30_000
    @Option(help: "Load-generator processes.") var loadProcesses = 2
    @Flag(help: "Measure Herald only.") var skipMosquitto = false
    @Flag(help: "Measure memory per idle connection only.") var memoryOnly = false
    @Option(help: "Seconds of quiet after which a connection is parked (mqtt.parkAfter; 0: never; default: Herald's).") var parkAfter: Int?
    @Option(help: "Herald's phases to run (memory, fanout, stored, unicast), comma-separated; for profiling one.")
    var phases = "memory,fanout,stored,unicast"

    private func runs(_ phase: String) -> Bool {
        phases.split(separator: ",").contains { $0 == phase }
    }

    func run() async throws {
        // As `herald serve` does: the memory measured is the server's.
        ProcessHeap.limitArenas()
        do {
            try await measure()
        } catch {
            // PSQLError's description hides the server's message; a failed run should say it.
            FileHandle.standardError.write(Data("herald-bench gateway failed: \(String(reflecting: error))\n".utf8))
            throw error
        }
    }

    private func measure() async throws {
        let logger = {
            var logger = Logger(label: "herald-bench")
            logger.logLevel = .warning
            return logger
        }()
        let directory = Self.directory
        let postgres = try await EmbeddedPostgres.start(.init(directory: directory, durable: true), logger: logger)
        defer {
            postgres.stopImmediately()
            try? FileManager.default.removeItem(atPath: directory)
        }
        _ = try await DatabaseProbe.withConnection(to: postgres.url, logger: logger) { try await Migrator().migrate(on: $0, logger: logger) }

        // The gateway alone, on the delivery pool as in a node; the benchmark's own
        // connection seeds the devices.
        let client = PostgresClient(configuration: postgres.url.clientConfiguration(maximumConnections: 2), backgroundLogger: logger)
        let durable = DurablePool(url: postgres.url, maximumConnections: 2, logger: logger)
        let delivery = DeliveryPool(url: postgres.url, maximumConnections: 8, logger: logger)
        let stores = HeraldStores(
            durable: durable,
            delivery: delivery,
            sealer: try CredentialSealer(keyBytes: Array(repeating: 1, count: 32)),
            logger: logger
        )
        let gateway = Gateway(
            configuration: GatewayConfiguration(
                host: "127.0.0.1",
                port: 0,
                maxQueued: 100_000,
                authCacheTTL: .seconds(600),
                parkAfter: parkAfter.map { $0 == 0 ? nil : .seconds($0) } ?? GatewayConfiguration().parkAfter
            ),
            store: stores.gateway,
            logger: logger
        )
        var results = Results()
        let group = ServiceGroup(services: [client, durable, delivery, gateway], logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            defer { tasks.cancelAll() }
            let port = try await gateway.localAddress.port!
            let (appKey, fleet) = try await Self.seed(stores.api, client, count: max(connections, devices))
            let ids = fleet.map(\.registrationID)
            say("Herald gateway on :\(port), \(fleet.count) devices seeded")

            if runs("memory") {
                results.memory["herald"] = try await measureMemory(
                    clientIDs: Array(ids.prefix(connections)),
                    port: port,
                    pid: getpid(),
                    username: appKey,
                    subscribe: nil,
                    settled: {
                        // Idle connections park after `mqtt.parkAfter` (10 s, as configured
                        // by default): measured once they have, and the lot trimmed the heap.
                        let clock = ContinuousClock()
                        let deadline = clock.now.advanced(by: .seconds(40))
                        while gateway.parkedCount < connections, clock.now < deadline { try await Task.sleep(for: .milliseconds(200)) }
                        say("  \(gateway.parkedCount) of \(connections) connections parked")
                        // The lot trims the heap once no connection parked for a second.
                        try await Task.sleep(for: .seconds(4))
                    }
                )
            }
            if memoryOnly {
                await group.triggerGracefulShutdown()
                return
            }
            let load = try await Fleet.start(
                clientIDs: Array(ids.prefix(devices)),
                processes: loadProcesses,
                port: port,
                username: appKey,
                password: Self.secret,
                subscribe: nil
            )
            let targets = Array(fleet.prefix(devices))
            // Let the gateway settle the new connections (their replays are over when the
            // database is quiet), then vacuum and analyse what the seeding and the
            // connections churned, as autovacuum would have done in a database up for a
            // while: otherwise that work lands in the phases measured.
            try await client.waitUntilQuiet()
            try await client.query("VACUUM ANALYZE")
            // `broadcasts` broadcasts to every device at once, each through one deliver call.
            @Sendable func broadcast(_ prefix: String, timeToLive: Duration) async throws {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<broadcasts {
                        group.addTask {
                            _ = try await gateway.deliver(
                                GatewayMessage(msgID: "\(prefix)\(index)", payload: WallClock.stampedPayload(), timeToLive: timeToLive),
                                to: targets,
                                ackTimeout: .seconds(60)
                            )
                        }
                    }
                    try await group.waitForAll()
                }
            }
            for (phase, name, timeToLive) in [("fanout", "herald TTL 0", Duration.zero), ("stored", "herald TTL 1h (stored)", .seconds(3600))]
            where runs(phase) {
                try await client.waitUntilQuiet()
                say("  \(name): \(gateway.parkedCount) of \(devices) connections parked at the start")
                results.fanout[name] = try await measure(load, server: getpid(), expected: devices * broadcasts) {
                    try await broadcast(phase, timeToLive: timeToLive)
                }
            }
            // Unicast the way the message center hands the gateway a claimed batch of pushes:
            // one call for the messages due, each to its own device.
            @Sendable func sendUnicast(_ prefix: String, _ indices: [Int]) async throws {
                let deliveries = indices.map { index in
                    GatewayDelivery(
                        message: GatewayMessage(msgID: "\(prefix)\(index)", payload: WallClock.stampedPayload(), timeToLive: .zero),
                        device: targets[index % targets.count],
                        seq: nil
                    )
                }
                _ = try await gateway.send(deliveries)
            }
            if runs("unicast") {
                try await client.waitUntilQuiet()
                say("  unicast: \(gateway.parkedCount) of \(devices) connections parked at the start")
                let unicast = try await measure(load, server: getpid(), expected: unicastMessages) {
                    try await Self.batched(count: unicastMessages, rate: nil) { try await sendUnicast("u", $0) }
                }
                results.unicast["herald"] = unicast
                results.unicastHalf["herald"] = try await measure(load, server: getpid(), expected: unicastMessages / 2) {
                    try await Self.batched(count: unicastMessages / 2, rate: unicast.rate / 2) { try await sendUnicast("h", $0) }
                }
            }
            load.stop()
            await group.triggerGracefulShutdown()
        }

        if !skipMosquitto {
            for (name, duplicates) in [("mosquitto", false), ("mosquitto dup", true)] {
                try await benchMosquitto(name: name, allowDuplicates: duplicates, results: &results)
            }
        }
        results.print()
    }

    static let secret = "bench-device-secret"

    /// An app and `count` devices, inserted set-based.
    static func seed(_ store: APIStore, _ client: PostgresClient, count: Int) async throws -> (String, [DeviceIdentity]) {
        let app = try await store.createApp(name: "bench")
        try await client.query(
            """
            INSERT INTO devices (app_id, registration_id, platform, secret_hash)
            SELECT \(app.app.id), lpad(to_hex(g), 20, '0'), 'linux', \(ByteBuffer(bytes: SecretHash.digest(secret)))
            FROM generate_series(1, \(count)) AS g
            """
        )
        var devices: [DeviceIdentity] = []
        let rows = try await client.query("SELECT id, app_id, registration_id FROM devices ORDER BY id")
        for try await (id, appID, registrationID) in rows.decode((Int64, Int64, String).self) {
            devices.append(DeviceIdentity(deviceID: id, appID: appID, registrationID: registrationID))
        }
        return (app.app.appKey, devices)
    }

    /// Runs `send`, then collects what the devices received; `server` is the process whose
    /// CPU time counts as the server's: for Herald this one and its PostgreSQL cluster's.
    func measure(_ fleet: Fleet, server: Int32, expected: Int, _ send: () async throws -> Void) async throws -> Measurement {
        _ = try await fleet.report()
        let devices = fleet.processes.map(\.pid)
        let postgresCPU = Self.postgresCPU(server)
        let serverCPU = CPUMeter.cpuSeconds(server) + postgresCPU
        let devicesCPU = devices.map(CPUMeter.cpuSeconds).reduce(0, +)
        let start = WallClock.nanoseconds()
        try await send()
        let (samples, last) = try await fleet.collect(expected: expected)
        let postgresAfter = Self.postgresCPU(server)
        let sorted = samples.sorted()
        let seconds = Double(max(last - start, 1)) / 1e9
        let measurement = Measurement(
            count: samples.count,
            expected: expected,
            rate: Double(samples.count) / seconds,
            p50: Stats.percentile(sorted, 0.5),
            p99: Stats.percentile(sorted, 0.99),
            postgresMicroseconds: (postgresAfter - postgresCPU) * 1e6 / Double(max(samples.count, 1)),
            serverMicroseconds: (CPUMeter.cpuSeconds(server) + postgresAfter - serverCPU) * 1e6 / Double(max(samples.count, 1)),
            devicesMicroseconds: (devices.map(CPUMeter.cpuSeconds).reduce(0, +) - devicesCPU) * 1e6 / Double(max(samples.count, 1))
        )
        say("  \(Stats.format(measurement.rate, 0))/s, p50 \(Stats.format(measurement.p50, 2)) ms, p99 \(Stats.format(measurement.p99, 2)) ms")
        return measurement
    }

    /// CPU seconds of the PostgreSQL cluster Herald started (none for another server).
    static func postgresCPU(_ pid: Int32) -> Double {
        var seconds = 0.0
        if pid == getpid(), let text = try? String(contentsOfFile: postmasterPIDFile, encoding: .utf8),
            let line = text.split(separator: "\n").first, let postmaster = Int32(line)
        {
            seconds += CPUMeter.processes(parent: postmaster).map(CPUMeter.cpuSeconds).reduce(CPUMeter.cpuSeconds(postmaster), +)
        }
        return seconds
    }

    /// This run's embedded PostgreSQL cluster.
    static var directory: String { NSTemporaryDirectory() + "herald-bench-\(getpid())" }
    static var postmasterPIDFile: String { directory + "/data/postmaster.pid" }

    /// Hands out `count` message indices in batches, at most `rate` per second: `senders`
    /// tasks each take the indices due (at most `maxBatch`), pass them to `send` in one call
    /// and wait for it, so up to `senders` × `maxBatch` messages are in flight.
    static func batched(
        count: Int,
        rate: Double?,
        senders: Int = 4,
        maxBatch: Int = 250,
        _ send: @escaping @Sendable ([Int]) async throws -> Void
    ) async throws {
        let start = ContinuousClock.now
        let next = NIOLockedValueBox(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<senders {
                group.addTask {
                    while true {
                        let elapsed = ContinuousClock.now - start
                        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                        let due = rate.map { min(count, Int(seconds * $0) + 1) } ?? count
                        let taken: Range<Int>? = next.withLockedValue { next in
                            guard next < count else { return nil }
                            let end = max(next, min(due, next + maxBatch))
                            defer { next = end }
                            return next..<end
                        }
                        guard let taken else { return }
                        if taken.isEmpty, let rate {
                            // Nothing due yet: wait until the next message is.
                            try await Task.sleep(until: start + .seconds(Double(taken.lowerBound) / rate))
                            continue
                        }
                        try await send(Array(taken))
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    func benchMosquitto(name: String, allowDuplicates: Bool, results: inout Results) async throws {
        let broker = try Mosquitto.start(allowDuplicates: allowDuplicates)
        defer { broker.stop() }
        try await Task.sleep(for: .milliseconds(500))
        say("\(name) on :\(broker.port)")
        let memoryIDs = (0..<connections).map { "m\($0)" }
        results.memory[name] = try await measureMemory(
            clientIDs: memoryIDs,
            port: broker.port,
            pid: broker.pid,
            username: nil,
            subscribe: "bench/all"
        )
        say("  memory \(results.memory[name] ?? 0) bytes per connection")

        let ids = (0..<devices).map { "d\($0)" }
        let fanoutFleet = try await Fleet.start(
            clientIDs: ids,
            processes: loadProcesses,
            port: broker.port,
            username: nil,
            password: nil,
            subscribe: "bench/all"
        )
        let publisher = try await Publisher.connect(host: "127.0.0.1", port: broker.port)
        results.fanout[name] = try await measure(fanoutFleet, server: broker.pid, expected: devices * broadcasts) {
            for _ in 0..<broadcasts { try await publisher.publish(topic: "bench/all", payload: WallClock.stampedPayload()) }
            try await publisher.drain()
        }
        fanoutFleet.stop()

        let unicastFleet = try await Fleet.start(
            clientIDs: ids,
            processes: loadProcesses,
            port: broker.port,
            username: nil,
            password: nil,
            subscribe: "bench/{id}"
        )
        let unicast = try await measure(unicastFleet, server: broker.pid, expected: unicastMessages) {
            for index in 0..<unicastMessages { try await publisher.publish(topic: "bench/d\(index % devices)", payload: WallClock.stampedPayload()) }
            try await publisher.drain()
        }
        results.unicast[name] = unicast
        results.unicastHalf[name] = try await measure(unicastFleet, server: broker.pid, expected: unicastMessages / 2) {
            let start = ContinuousClock.now
            for index in 0..<(unicastMessages / 2) {
                let due = start + .milliseconds(Int64(Double(index) / (unicast.rate / 2) * 1000))
                if due > .now { try await Task.sleep(until: due) }
                try await publisher.publish(topic: "bench/d\(index % devices)", payload: WallClock.stampedPayload())
            }
            try await publisher.drain()
        }
        unicastFleet.stop()
        await publisher.close()
    }
}

struct Measurement {
    var count: Int
    var expected: Int
    var rate: Double
    var p50: Double
    var p99: Double
    /// CPU time per message received, of PostgreSQL (Herald's), of the server (PostgreSQL
    /// included) and of the device processes.
    var postgresMicroseconds: Double
    var serverMicroseconds: Double
    var devicesMicroseconds: Double
}

struct Results {
    var memory: [String: Double] = [:]
    var fanout: [String: Measurement] = [:]
    var unicast: [String: Measurement] = [:]
    var unicastHalf: [String: Measurement] = [:]

    func print() {
        func line(_ text: String) { say(text) }
        line("")
        line("CPU µs/msg: CPU time per message received; server = Herald's process and its PostgreSQL cluster,")
        line("or mosquitto; devices = the load processes")
        line("Resident memory per idle connection")
        for (name, bytes) in memory.sorted(by: { $0.key < $1.key }) {
            line("  \(name.padding(toLength: 26, withPad: " ", startingAt: 0)) \(Stats.format(bytes, 0)) bytes")
        }
        for (title, table) in [
            ("Broadcast fan-out, QoS 1", fanout), ("Unicast QoS 1, flat out", unicast), ("Unicast QoS 1 at half that rate", unicastHalf),
        ] {
            line(title)
            for (name, m) in table.sorted(by: { $0.key < $1.key }) {
                line(
                    "  \(name.padding(toLength: 26, withPad: " ", startingAt: 0)) \(Stats.format(m.rate, 0))/s  p50 \(Stats.format(m.p50, 2)) ms  p99 \(Stats.format(m.p99, 2)) ms  (\(m.count)/\(m.expected))  CPU µs/msg: server \(Stats.format(m.serverMicroseconds, 1))\(m.postgresMicroseconds > 0.05 ? " (PostgreSQL \(Stats.format(m.postgresMicroseconds, 1)))" : ""), devices \(Stats.format(m.devicesMicroseconds, 1))"
                )
            }
        }
        line("Ratios (Herald / peer)")
        if let herald = memory["herald"], let peer = memory["mosquitto"] {
            line("  memory per connection vs mosquitto: \(Stats.format(herald / peer, 2))x")
        }
        for key in ["herald TTL 0", "herald TTL 1h (stored)"] {
            for peer in ["mosquitto", "mosquitto dup"] {
                if let h = fanout[key], let p = fanout[peer] { line("  fan-out \(key) vs \(peer): \(Stats.format(h.rate / p.rate, 2))x") }
            }
        }
        if let h = unicast["herald"], let p = unicast["mosquitto"] { line("  unicast vs mosquitto: \(Stats.format(h.rate / p.rate, 2))x") }
    }
}
