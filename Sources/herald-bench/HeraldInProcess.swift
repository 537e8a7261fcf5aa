import Foundation
import HeraldAPI
import HeraldAPNs
import HeraldAPNsSandbox
import HeraldCenter
import HeraldCore
import HeraldGateway
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
    }

    let store: HeraldStore
    let gateway: Gateway
    let apiPort: Int
    let gatewayPort: Int
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

        let client = PostgresClient(
            configuration: postgres.url.clientConfiguration(maximumConnections: configuration.poolSize),
            backgroundLogger: logger
        )
        let sealer = try CredentialSealer(keyBytes: Array(repeating: 7, count: 32))
        let store = HeraldStore(client: client, sealer: sealer, logger: logger)
        // As herald serve: the gateway and the center on their own pool, without waiting
        // for the WAL flush (their work is redone from the durable job if lost).
        let deliveryClient = PostgresClient(
            configuration: postgres.url.clientConfiguration(maximumConnections: configuration.poolSize, synchronousCommit: false),
            backgroundLogger: logger
        )
        let deliveryStore = store.using(deliveryClient)
        let sandbox = try await APNsSandbox.start(configuration: .init(transport: .plaintext))
        let events = DeviceEvents()
        let gateway = Gateway(
            configuration: GatewayConfiguration(host: "127.0.0.1", port: 0, nodeID: "bench-1"),
            store: deliveryStore,
            onDeviceEvent: events.receive,
            logger: logger
        )
        var center = CenterConfiguration()
        center.nodeID = "bench-1"
        center.workers = configuration.workers
        center.batchSize = configuration.batchSize
        center.apns = .sandbox(
            .init(host: "127.0.0.1", port: sandbox.port, transport: .plaintext) { credentials in
                if case .token(let keyID, let teamID, let pem) = credentials.auth {
                    try sandbox.registerSigningKey(keyID: keyID, teamID: teamID, privateKeyPEM: pem)
                }
            }
        )
        let messageCenter = MessageCenter(configuration: center, store: deliveryStore, gateway: gateway, events: events, logger: logger)
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        var api = APIConfiguration(host: "127.0.0.1", port: 0, adminToken: RandomToken.hex(byteCount: 16))
        if let wait = configuration.databaseWait {
            api.databaseURL = postgres.url
            api.databaseWait = wait
        }
        let app = buildApplication(
            configuration: api,
            store: store,
            registry: PrometheusCollectorRegistry(),
            services: [deliveryClient, gateway, messageCenter],
            localFanOut: messageCenter.localFanOut,
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: logger
        )
        var groupConfiguration = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [], logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(20)
        groupConfiguration.maximumCancellationDuration = .seconds(10)
        let group = ServiceGroup(configuration: groupConfiguration)
        do {
            let result = try await run(group, ports: ports, store: store, gateway: gateway, pidFile: directory + "/data/postmaster.pid", body)
            await sandbox.shutdown()
            return result
        } catch {
            await sandbox.shutdown()
            throw error
        }
    }

    private static func run<Result: Sendable>(
        _ group: ServiceGroup,
        ports: AsyncStream<Int>,
        store: HeraldStore,
        gateway: Gateway,
        pidFile: String,
        _ body: @Sendable @escaping (HeraldInProcess) async throws -> Result
    ) async throws -> Result {
        try await withThrowingTaskGroup(of: Result?.self) { tasks in
            tasks.addTask {
                try await group.run()
                return nil
            }
            tasks.addTask {
                let apiPort = try await withDeadline(.seconds(30), "the HTTP API to listen") { await ports.first { _ in true } ?? 0 }
                let gatewayPort = try await withDeadline(.seconds(30), "the gateway to listen") { try await gateway.localAddress.port ?? 0 }
                let herald = HeraldInProcess(
                    store: store,
                    gateway: gateway,
                    apiPort: apiPort,
                    gatewayPort: gatewayPort,
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
        let rows = try await store.client.query("SELECT count(*) FROM push_jobs")
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    /// What each PostgreSQL backend serving Herald is doing now (idle ones left out):
    /// its wait event (`Lock/object` is the NOTIFY queue lock, `IO/WALSync` a commit's
    /// flush), `running` when on CPU, `Herald, mid-transaction` when idle in a transaction.
    func backendStates() async throws -> [String] {
        let rows = try await store.client.query(
            """
            SELECT CASE WHEN state = 'idle in transaction' THEN 'Herald, mid-transaction'
                        WHEN wait_event IS NULL THEN 'running'
                        ELSE wait_event_type || '/' || wait_event END
            FROM pg_stat_activity
            WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND state <> 'idle'
              AND query NOT LIKE 'LISTEN%'
            """
        )
        var states: [String] = []
        for try await state in rows.decode(String.self) { states.append(state) }
        return states
    }

    /// Deletes every job left: a backlog an earlier phase left behind.
    func abandonJobs() async throws {
        try await store.client.query("DELETE FROM push_jobs")
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
