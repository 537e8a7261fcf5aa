import Foundation
import HeraldCore
import HeraldStore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The PostgreSQL the tests run against: a throwaway embedded cluster started once per
/// test process (or the server in `HERALD_TEST_DATABASE_URL`), with a fresh database
/// per test, copied from a migrated template so every test starts from the real schema.
public enum TestDatabase {
    public static let logger: Logger = {
        var logger = Logger(label: "herald.tests")
        logger.logLevel = ProcessInfo.processInfo.environment["HERALD_TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        return logger
    }()

    /// The logger of the tests' connection pools, at info at least: postgres-nio logs a
    /// failed connection attempt at info, and while a pool retries one, it holds every
    /// query waiting (even with idle connections), so the attempt must show.
    public static let poolLogger: Logger = {
        var pool = Logger(label: "herald.tests.pool")
        pool.logLevel = min(logger.logLevel, .info)
        return pool
    }()

    /// A pooled client for `url`, as the tests use it: a connection attempt may take 30 s
    /// (PostgreSQL under a full suite's load can be slow to accept one), not the 5 s Herald
    /// allows, after which the pool would hold every query until a retry succeeds.
    public static func client(_ url: DatabaseURL, maximumConnections: Int) -> PostgresClient {
        PostgresClient(
            configuration: url.clientConfiguration(maximumConnections: maximumConnections, connectTimeout: .seconds(30)),
            backgroundLogger: poolLogger
        )
    }

    /// A sealer with a fixed test key.
    public static let sealer = try! CredentialSealer(keyBytes: Array(repeating: 7, count: 32))

    /// Runs `body` with the URL of a new database that exists only for it.
    /// - Parameter migrated: whether the database has Herald's schema, or is empty.
    public static func withDatabase<Result: Sendable>(
        migrated: Bool = true,
        _ body: @Sendable (DatabaseURL) async throws -> Result
    ) async throws -> Result {
        try await TestSlots.withSlot { try await withFreshDatabase(migrated: migrated, body) }
    }

    private static func withFreshDatabase<Result: Sendable>(
        migrated: Bool,
        _ body: @Sendable (DatabaseURL) async throws -> Result
    ) async throws -> Result {
        let server = try await Cluster.shared.server()
        let name = "t_" + RandomToken.hex(byteCount: 8)
        try await Cluster.shared.createDatabase(name, template: migrated ? Cluster.template : "template0")
        let url = server.with(database: name)
        do {
            let result = try await body(url)
            try? await Cluster.shared.dropDatabase(name)
            return result
        } catch {
            try? await Cluster.shared.dropDatabase(name)
            throw error
        }
    }

    /// Runs `body` with the store of a node on a new, migrated database: its facades over
    /// the two pools, as a node wires them, and a client of the test's own for looking at
    /// the tables. The pools run for the duration.
    public static func withStore<Result: Sendable>(_ body: @Sendable (TestStores) async throws -> Result) async throws -> Result {
        try await withDatabase { url in
            try await withStores(url, body)
        }
    }

    /// A node's store on `url`, as a node wires it, with nothing running yet: its facades,
    /// and its two pools, services for the caller to run (with the application, say).
    public static func makeStores(
        _ url: DatabaseURL,
        maximumConnections: Int = 4,
        connectTimeout: Duration = .seconds(30)
    ) -> (stores: HeraldStores, pools: [any Service]) {
        let durable = DurablePool(url: url, maximumConnections: maximumConnections, connectTimeout: connectTimeout, logger: poolLogger)
        let delivery = DeliveryPool(url: url, maximumConnections: maximumConnections, connectTimeout: connectTimeout, logger: poolLogger)
        return (HeraldStores(durable: durable, delivery: delivery, sealer: sealer, logger: logger), [durable, delivery])
    }

    /// Runs `body` with the store of a node on `url` (see ``withStore(_:)``).
    public static func withStores<Result: Sendable>(
        _ url: DatabaseURL,
        maximumConnections: Int = 4,
        _ body: @Sendable (TestStores) async throws -> Result
    ) async throws -> Result {
        let (stores, pools) = makeStores(url, maximumConnections: maximumConnections)
        return try await withClient(url) { client in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for pool in pools { group.addTask { try await pool.run() } }
                defer { group.cancelAll() }
                return try await body(TestStores(stores, sql: client))
            }
        }
    }

    /// Runs `body` with a running pooled client for `url`.
    public static func withClient<Result: Sendable>(
        _ url: DatabaseURL,
        _ body: @Sendable (PostgresClient) async throws -> Result
    ) async throws -> Result {
        let client = Self.client(url, maximumConnections: 4)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }
}

/// The cluster shared by every test in the process.
actor Cluster {
    static let shared = Cluster()
    static let template = "herald_template"

    private var started: Task<DatabaseURL, any Error>?

    func server() async throws -> DatabaseURL {
        if let started { return try await started.value }
        let task = Task { try await Self.start() }
        started = task
        return try await task.value
    }

    func createDatabase(_ name: String, template: String) async throws {
        let server = try await server()
        // Copying a template needs nobody connected to it; nobody connects to it once the
        // migrations are done. (Calls interleave on this actor at each await.)
        _ = try await DatabaseProbe.withConnection(to: server, logger: TestDatabase.logger) { connection in
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name) TEMPLATE \(template)"), logger: TestDatabase.logger)
        }
    }

    func dropDatabase(_ name: String) async throws {
        let server = try await server()
        _ = try await DatabaseProbe.withConnection(to: server, logger: TestDatabase.logger) { connection in
            try await connection.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: TestDatabase.logger)
        }
    }

    private static func start() async throws -> DatabaseURL {
        let logger = TestDatabase.logger
        let server: DatabaseURL
        if let configured = ProcessInfo.processInfo.environment["HERALD_TEST_DATABASE_URL"] {
            server = try DatabaseURL(configured)
        } else {
            let directory = NSTemporaryDirectory() + "herald-tests-\(getpid())"
            let cluster = try await EmbeddedPostgres.start(.init(directory: directory, durable: false, database: "postgres"), logger: logger)
            ClusterCleanup.register(cluster, directory: directory)
            server = cluster.url
        }
        try await DatabaseProbe.withConnection(to: server, logger: logger) { connection in
            try await connection.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(template) WITH (FORCE)"), logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(template)"), logger: logger)
        }
        _ = try await DatabaseProbe.withConnection(to: server.with(database: template), logger: logger) { connection in
            try await Migrator().migrate(on: connection, logger: logger)
        }
        return server
    }
}

/// Stops the test cluster and deletes it when the test process exits.
enum ClusterCleanup {
    private static let registered = Mutex<(cluster: EmbeddedPostgres, directory: String)?>(nil)

    static func register(_ cluster: EmbeddedPostgres, directory: String) {
        registered.withLock { $0 = (cluster, directory) }
        atexit {
            guard let (cluster, directory) = ClusterCleanup.registered.withLock({ $0 }) else { return }
            cluster.stopImmediately()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }
}

/// A node's store for a test: each consumer's facade, and `sql`, a client of the test's own
/// for reading and arranging the tables directly.
public struct TestStores: Sendable {
    public let api: APIStore
    public let center: CenterStore
    public let gateway: GatewayStore
    public let cluster: ClusterStore
    /// The event log's readers.
    public let events: EventStore
    public let sql: PostgresClient

    /// A node's facades, and the test's own client.
    public init(_ stores: HeraldStores, sql: PostgresClient) {
        api = stores.api
        center = stores.center
        gateway = stores.gateway
        cluster = stores.cluster
        events = stores.events
        self.sql = sql
    }
}

extension TestStores {
    /// A device's unacknowledged, unexpired messages, oldest first (its inbox's first page).
    public func pendingMessages(deviceID: Int64) async throws -> [InboxMessage] {
        try await gateway.pendingInbox(deviceID: deviceID).messages
    }

    /// The seq a device has acknowledged through (0: none), nil for no such device.
    public func acknowledgedSeq(deviceID: Int64) async throws -> Int64? {
        try await position("acked_seq", deviceID: deviceID)
    }

    /// The seq a device was sent through (0: none), nil for no such device.
    public func sentSeq(deviceID: Int64) async throws -> Int64? {
        try await position("sent_seq", deviceID: deviceID)
    }

    /// The node holding a device's session, nil when none does (never connected, or the
    /// last connection's release is written).
    public func sessionHolder(deviceID: Int64) async throws -> String? {
        let rows = try await sql.query("SELECT node_id FROM device_sessions WHERE device_id = \(deviceID)", logger: TestDatabase.logger)
        for try await node in rows.decode(String?.self) { return node }
        return nil
    }

    private func position(_ column: String, deviceID: Int64) async throws -> Int64? {
        let rows = try await sql.query(
            "SELECT COALESCE(a.\(unescaped: column), 0) FROM devices d LEFT JOIN device_acks a ON a.device_id = d.id WHERE d.id = \(deviceID)",
            logger: TestDatabase.logger
        )
        for try await seq in rows.decode(Int64.self) { return seq }
        return nil
    }
}
