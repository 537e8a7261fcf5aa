import Crypto
import Foundation
import HeraldAPNs
import HeraldCore
import HeraldStore
import Logging
import NIOConcurrencyHelpers

/// One APNs client per (app, environment), made from the app's credentials on first use,
/// run for as long as the center runs, and replaced when the credentials change.
///
/// `run()` owns every client's `run()`: clients are handed to it through a stream, so no
/// task outlives the center.
final class APNsDispatcher: Sendable {
    struct Key: Hashable, Sendable {
        var appID: Int64
        var environment: APNsEnvironment
    }

    private struct Entry: Sendable {
        var client: APNsClient?
        var updatedAt: Date?
        var checkedAt: ContinuousClock.Instant
        var stop: AsyncStream<Void>.Continuation?
    }

    private let store: HeraldStore
    private let routing: APNsRouting
    private let logger: Logger
    private let entries = NIOLockedValueBox<[Key: Entry]>([:])
    private let sandboxCredentials = NIOLockedValueBox<[Int64: APNsCredentials]>([:])
    private let launches: AsyncStream<(APNsClient, AsyncStream<Void>)>
    private let launch: AsyncStream<(APNsClient, AsyncStream<Void>)>.Continuation
    /// How long a client is trusted before its app's credentials are checked for changes.
    private let recheck: Duration = .seconds(5)

    private let connections: Int

    init(store: HeraldStore, routing: APNsRouting, connections: Int, logger: Logger) {
        self.store = store
        self.routing = routing
        self.connections = connections
        self.logger = logger
        (launches, launch) = AsyncStream.makeStream()
    }

    /// Runs every client until cancelled.
    func run() async {
        await withDiscardingTaskGroup { group in
            for await (client, stop) in launches {
                group.addTask {
                    await withDiscardingTaskGroup { inner in
                        inner.addTask { try? await client.run() }
                        for await _ in stop {}
                        inner.cancelAll()
                    }
                }
            }
            group.cancelAll()
        }
    }

    func shutdown() {
        launch.finish()
        entries.withLockedValue { entries in
            for entry in entries.values { entry.stop?.finish() }
            entries.removeAll()
        }
    }

    /// The client for an app in an environment, or nil when the app has no usable
    /// credentials (none, or APNs refused them).
    func client(appID: Int64, environment: APNsEnvironment) async throws -> APNsClient? {
        let key = Key(appID: appID, environment: environment)
        let now = ContinuousClock.now
        if let entry = entries.withLockedValue({ $0[key] }), now - entry.checkedAt < recheck {
            return entry.client
        }
        let stored = try await store.apnsCredentials(appID: appID)
        if let cached = entries.withLockedValue({ $0[key] }), cached.updatedAt == stored?.updatedAt {
            entries.withLockedValue { $0[key]?.checkedAt = now }
            return stored?.brokenReason == nil ? cached.client : nil
        }
        if let stored, stored.brokenReason != nil {
            replace(key, with: Entry(client: nil, updatedAt: stored.updatedAt, checkedAt: now, stop: nil))
            return nil
        }
        guard let credentials = try stored?.credentials ?? sandboxCredentials(appID: appID) else {
            replace(key, with: Entry(client: nil, updatedAt: nil, checkedAt: now, stop: nil))
            return nil
        }
        if case .sandbox(let target) = routing { try target.admit(credentials) }
        let client = try APNsClient(credentials: credentials, configuration: configuration(for: environment), logger: logger)
        let (stop, stopper) = AsyncStream<Void>.makeStream()
        replace(key, with: Entry(client: client, updatedAt: stored?.updatedAt, checkedAt: now, stop: stopper))
        launch.yield((client, stop))
        logger.info(
            "APNs client started",
            metadata: ["herald.app_id": "\(appID)", "apns.environment": "\(environment.rawValue)", "apns.bundle_id": "\(credentials.bundleID)"]
        )
        return client
    }

    private func replace(_ key: Key, with entry: Entry) {
        let old = entries.withLockedValue { entries in
            defer { entries[key] = entry }
            return entries[key]
        }
        old?.stop?.finish()
    }

    private func configuration(for environment: APNsEnvironment) -> APNsClient.Configuration {
        var configuration: APNsClient.Configuration
        switch routing {
        case .apple:
            configuration = APNsClient.Configuration(environment: environment)
        case .sandbox(let target):
            configuration = APNsClient.Configuration(host: target.host, port: target.port, transport: target.transport)
        }
        configuration.connectionCount = connections
        return configuration
    }

    /// On the sandbox, an app without credentials gets a generated key (registered with the
    /// sandbox) so its pushes show as APNs deliveries.
    private func sandboxCredentials(appID: Int64) throws -> APNsCredentials? {
        guard case .sandbox = routing else { return nil }
        if let existing = sandboxCredentials.withLockedValue({ $0[appID] }) { return existing }
        let key = P256.Signing.PrivateKey()
        let keyID = String(format: "SBX%07lld", appID % 10_000_000)
        let teamID = "HERALDSBX1"
        let credentials = APNsCredentials(
            auth: .token(keyID: keyID, teamID: teamID, privateKeyPEM: key.pemRepresentation),
            bundleID: "dev.herald.app\(appID)",
            environment: .sandbox
        )
        sandboxCredentials.withLockedValue { $0[appID] = credentials }
        return credentials
    }
}
