import Foundation
import HeraldAPI
import HeraldAPNs
import HeraldAPNsSandbox
import HeraldCenter
import HeraldCore
import HeraldGateway
import HeraldNode
import HeraldStore
import HeraldTestSupport
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import Prometheus
import ServiceLifecycle

/// A whole Herald node for an end-to-end test, wired by ``HeraldNode`` exactly as
/// `herald serve` wires it (both pools included): the HTTP API and the gateway on free
/// ports, the message center, a fresh database with one app, and an APNs sandbox on
/// port 0 that every app's credentials are admitted to.
public struct TestNode: Sendable {
    public static let adminToken = "admin-token-for-tests-0123456789"

    /// The API's base URL (`http://127.0.0.1:<port>`).
    public let apiURL: URL
    public let gateway: Gateway
    public let gatewayPort: Int
    public let sandbox: APNsSandbox
    /// The store's facades, and a client of the test's own (`sql`).
    public let stores: TestStores
    public let databaseURL: DatabaseURL
    /// The app made for the test.
    public let app: CreatedApp
    /// The payload of every event devices published, in order.
    public let deviceEvents: NIOLockedValueBox<[String]>

    public var appKey: String { app.app.appKey }
    public var masterSecret: String { app.masterSecret }
    public var appID: Int64 { app.app.id }

    /// Starts a node, runs `body` with it, then shuts it down gracefully.
    /// - Parameter configure: changes the node's configuration, after the tests' defaults
    ///   (acknowledgement timeout 1 s, poll interval and APNs retry delay 200 ms).
    public static func run(
        configure: @Sendable (inout HeraldNodeConfiguration) -> Void = { _ in },
        faults: CenterFaults = CenterFaults(),
        _ body: @Sendable @escaping (TestNode) async throws -> Void
    ) async throws {
        try await TestDatabase.withDatabase { url in
            let sandbox = try await APNsSandbox.start(configuration: .init(transport: .plaintext))
            do {
                try await run(url, sandbox: sandbox, configure: configure, faults: faults, body)
                await sandbox.shutdown()
            } catch {
                await sandbox.shutdown()
                throw error
            }
        }
    }

    /// Starts a node on an existing database (and sandbox), runs `body`, then shuts it
    /// down: a node restarted on the same data. `app`: the app of an earlier node on it
    /// (nil makes one).
    public static func run(
        on url: DatabaseURL,
        sandbox: APNsSandbox,
        app: CreatedApp?,
        configure: @Sendable (inout HeraldNodeConfiguration) -> Void = { _ in },
        _ body: @Sendable @escaping (TestNode) async throws -> Void
    ) async throws {
        try await run(url, sandbox: sandbox, app: app, configure: configure, faults: CenterFaults(), body)
    }

    private static func run(
        _ url: DatabaseURL,
        sandbox: APNsSandbox,
        app: CreatedApp? = nil,
        configure: @Sendable (inout HeraldNodeConfiguration) -> Void,
        faults: CenterFaults,
        _ body: @Sendable @escaping (TestNode) async throws -> Void
    ) async throws {
        var center = CenterConfiguration()
        center.ackTimeout = .seconds(1)
        center.pollInterval = .milliseconds(200)
        center.retryDelay = .milliseconds(200)
        var configuration = HeraldNodeConfiguration(
            // The tests' connection attempts may take 30 s: PostgreSQL under a full
            // suite's load can be slow to accept one.
            database: .init(url: url, poolSize: 8, eventsPoolSize: 2, connectTimeout: .seconds(30)),
            api: APIConfiguration(host: "127.0.0.1", port: 0, adminToken: adminToken),
            gateway: GatewayConfiguration(host: "127.0.0.1", port: 0),
            center: center
        )
        configuration.node.nodeID = "test-node"
        configuration.apns.routing = .localSandbox(sandbox)
        configure(&configuration)
        let deviceEvents = NIOLockedValueBox<[String]>([])
        let (ports, portsContinuation) = AsyncStream.makeStream(of: ListeningPorts.self)
        let node = HeraldNode(
            configuration,
            sealer: TestDatabase.sealer,
            registry: PrometheusCollectorRegistry(),
            faults: faults,
            onListening: { listening in
                portsContinuation.yield(listening)
                portsContinuation.finish()
            },
            onDeviceEvent: { _, payload in
                deviceEvents.withLockedValue { $0.append(String(buffer: payload)) }
            },
            logger: TestDatabase.logger
        )
        var group = ServiceGroupConfiguration(services: [node.application], gracefulShutdownSignals: [], logger: TestDatabase.logger)
        group.maximumGracefulShutdownDuration = .seconds(20)
        let services = ServiceGroup(configuration: group)
        try await TestDatabase.withClient(url) { sql in
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await services.run() }
                do {
                    guard let listening = await ports.first(where: { _ in true }) else { throw TestFailure("the node stopped before it listened") }
                    let stores = TestStores(node.stores, sql: sql)
                    let app = if let app { app } else { try await stores.api.createApp(name: "Test") }
                    let test = TestNode(
                        apiURL: URL(string: "http://127.0.0.1:\(listening.http)")!,
                        gateway: node.gateway,
                        gatewayPort: listening.mqtt,
                        sandbox: sandbox,
                        stores: stores,
                        databaseURL: url,
                        app: app,
                        deviceEvents: deviceEvents
                    )
                    try await body(test)
                    await services.triggerGracefulShutdown()
                } catch {
                    await services.triggerGracefulShutdown()
                    try? await tasks.waitForAll()
                    throw error
                }
                try await tasks.waitForAll()
            }
        }
    }

    /// Rows of `table` (with an optional WHERE clause after it).
    public func count(_ tableAndFilter: String) async throws -> Int {
        let rows = try await stores.sql.query(PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM \(tableAndFilter)"), logger: TestDatabase.logger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }
}

extension HeraldNodeConfiguration {
    /// Lets the node's webhooks, callbacks and SMS providers reach this machine (loopback),
    /// where the tests' receivers listen: an administrator's `outbound.allowRanges`.
    public mutating func allowLoopbackReceivers() {
        node.outbound = OutboundAddressRule(allowed: [IPRange("127.0.0.0/8")!, IPRange("::1")!])
    }
}
