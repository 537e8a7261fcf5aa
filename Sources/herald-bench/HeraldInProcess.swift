import Foundation
import HeraldAPI
import HeraldAPNs
import HeraldAPNsSandbox
import HeraldCenter
import HeraldCore
import HeraldGateway
import HeraldNode
import HeraldStore
import Hummingbird
import Logging
import NIOCore
import PostgresNIO
import Prometheus
import ServiceLifecycle

/// Herald as `herald serve` composes it, in this process: an embedded PostgreSQL (durable),
/// the HTTP API with the gateway and the message center as its services, and an APNs
/// sandbox as the center's APNs.
struct HeraldInProcess: Sendable {
    struct Configuration: Sendable {
        /// PostgreSQL connections shared by the API and the center (`database.poolSize`).
        var poolSize = 20
        /// Fan-out workers (`center.workers`).
        var workers = 2
        /// Devices per fan-out batch (`center.batchSize`).
        var batchSize = CenterConfiguration().batchSize
        /// How long a request waits before the database is checked (`database.wait`);
        /// nil: never checked, as before herald serve bounded the wait.
        var databaseWait: Duration? = .seconds(5)
        /// Whether the API writes its audit log (always in `herald serve`).
        var audit = true
    }

    /// The API's store, to seed apps and devices.
    let store: APIStore
    /// A connection of the benchmark's own, to look at the database.
    let inspection: PostgresClient
    let gateway: Gateway
    let apiPort: Int
    let gatewayPort: Int
    /// The API's admin token (made up for the run).
    let adminToken: String
    /// The embedded cluster's `postmaster.pid`.
    let postmasterPIDFile: String

    /// Starts Herald, runs `body` against it, then shuts it down (gracefully when `body`
    /// returns or throws; `cleanup` stops PostgreSQL and removes its directory either way).
    static func run<Result: Sendable>(
        _ configuration: Configuration,
        cleanup: Cleanup,
        logger: Logger,
        _ body: @Sendable @escaping (HeraldInProcess) async throws -> Result
    ) async throws -> Result {
        let directory = NSTemporaryDirectory() + "herald-bench-push-\(getpid())"
        cleanup.add("remove \(directory)") { try? FileManager.default.removeItem(atPath: directory) }
        let postgres = try await EmbeddedPostgres.start(.init(directory: directory, durable: true), logger: logger)
        cleanup.add("stop PostgreSQL") { postgres.stopImmediately() }
        _ = try await DatabaseProbe.withConnection(to: postgres.url, logger: logger) { try await Migrator().migrate(on: $0, logger: logger) }

        let sealer = try CredentialSealer(keyBytes: Array(repeating: 7, count: 32))
        let adminToken = RandomToken.hex(byteCount: 16)
        let sandbox = try await APNsSandbox.start(configuration: .init(transport: .plaintext))
        var center = CenterConfiguration()
        center.workers = configuration.workers
        center.batchSize = configuration.batchSize
        var node = HeraldNodeConfiguration(
            database: .init(url: postgres.url, poolSize: configuration.poolSize, boundedWait: configuration.databaseWait != nil),
            api: APIConfiguration(host: "127.0.0.1", port: 0, adminToken: adminToken),
            gateway: GatewayConfiguration(host: "127.0.0.1", port: 0),
            center: center
        )
        node.api.audit = configuration.audit
        node.apns.routing = .localSandbox(sandbox)
        node.node.nodeID = "bench-1"
        // The benchmark's webhook receiver listens on this machine.
        node.node.outbound = OutboundAddressRule(allowed: [IPRange("127.0.0.0/8")!, IPRange("::1")!])
        if let wait = configuration.databaseWait { node.api.databaseWait = wait }
        let (ports, portContinuation) = AsyncStream.makeStream(of: ListeningPorts.self)
        let herald = HeraldNode(
            node,
            sealer: sealer,
            registry: PrometheusCollectorRegistry(),
            onListening: { listening in
                portContinuation.yield(listening)
                portContinuation.finish()
            },
            logger: logger
        )
        // The benchmark's own connection, to look at the database while Herald works.
        let inspection = PostgresClient(configuration: postgres.url.clientConfiguration(maximumConnections: 2), backgroundLogger: logger)
        let app = herald.application
        let store = herald.stores.api
        var groupConfiguration = ServiceGroupConfiguration(services: [inspection, app], gracefulShutdownSignals: [], logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(20)
        groupConfiguration.maximumCancellationDuration = .seconds(10)
        let group = ServiceGroup(configuration: groupConfiguration)
        do {
            let result = try await run(
                group,
                ports: ports,
                store: store,
                inspection: inspection,
                gateway: herald.gateway,
                adminToken: adminToken,
                pidFile: directory + "/data/postmaster.pid",
                body
            )
            await sandbox.shutdown()
            return result
        } catch {
            await sandbox.shutdown()
            throw error
        }
    }

    private static func run<Result: Sendable>(
        _ group: ServiceGroup,
        ports: AsyncStream<ListeningPorts>,
        store: APIStore,
        inspection: PostgresClient,
        gateway: Gateway,
        adminToken: String,
        pidFile: String,
        _ body: @Sendable @escaping (HeraldInProcess) async throws -> Result
    ) async throws -> Result {
        try await withThrowingTaskGroup(of: Result?.self) { tasks in
            tasks.addTask {
                try await group.run()
                return nil
            }
            tasks.addTask {
                let listening = try await withDeadline(.seconds(30), "Herald to listen") { await ports.first { _ in true } }
                guard let listening else { throw BenchError("Herald stopped before it listened") }
                let herald = HeraldInProcess(
                    store: store,
                    inspection: inspection,
                    gateway: gateway,
                    apiPort: listening.http,
                    gatewayPort: listening.mqtt,
                    adminToken: adminToken,
                    postmasterPIDFile: pidFile
                )
                do {
                    let result = try await body(herald)
                    await group.triggerGracefulShutdown()
                    return result
                } catch {
                    await group.triggerGracefulShutdown()
                    throw error
                }
            }
            var result: Result?
            while let finished = try await tasks.next() {
                if let finished { result = finished }
            }
            guard let result else { throw BenchError("Herald stopped before the benchmark finished") }
            return result
        }
    }

    /// Jobs not finished yet: the center's backlog.
    func pendingJobs() async throws -> Int {
        let rows = try await inspection.query("SELECT count(*) FROM push_jobs")
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    /// What each PostgreSQL backend serving Herald is doing now (``PostgresClient/backendStates()``).
    func backendStates() async throws -> [String] {
        try await inspection.backendStates()
    }

    /// Deletes every job left: a backlog an earlier phase left behind.
    func abandonJobs() async throws {
        try await inspection.query("DELETE FROM push_jobs")
    }
}

/// Runs `body`, failing with a clear error when it takes longer than `limit`.
func withDeadline<Value: Sendable>(
    _ limit: Duration,
    _ what: String,
    _ body: @Sendable @escaping () async throws -> Value
) async throws -> Value {
    try await withThrowingTaskGroup(of: Value?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw BenchError("timed out after \(limit) waiting for \(what)")
        }
        return value
    }
}
