import Foundation
import HeraldAPI
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import Prometheus

/// The API, over real sockets, on a PostgreSQL cluster of the test's own, which the test
/// may stop, restart or freeze: migrated, with Herald's own pool settings (a 5 s
/// connection attempt, not the tests' 30 s) and `database.wait` of 1 s. `body` gets the
/// API, the cluster and its directory; the cluster is stopped (and removed) after it,
/// whichever server then runs in the directory.
enum OwnDatabaseAPI {
    static func run(
        _ name: String,
        watch: PhaseWatch? = nil,
        _ body: @Sendable (APITest, EmbeddedPostgres, String) async throws -> Void
    ) async throws {
        let directory = NSTemporaryDirectory() + "herald-\(name)-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let logger = TestDatabase.logger
        let cluster = try await EmbeddedPostgres.start(.init(directory: directory, durable: false), logger: logger)
        do {
            let url = cluster.url
            _ = try await DatabaseProbe.withConnection(to: url, logger: logger) { connection in
                try await Migrator().migrate(on: connection, logger: logger)
            }
            let (stores, pools) = TestDatabase.makeStores(url, connectTimeout: .seconds(5))
            let app = buildApplication(
                configuration: APIConfiguration(
                    host: "127.0.0.1",
                    port: 0,
                    adminToken: APITest.adminToken,
                    databaseURL: url,
                    databaseWait: .seconds(1)
                ),
                store: stores.api,
                registry: PrometheusCollectorRegistry(),
                services: pools,
                logger: logger
            )
            let sql = PostgresClient(configuration: url.clientConfiguration(maximumConnections: 1), backgroundLogger: TestDatabase.poolLogger)
            watch?.enter("starting the API")
            try await app.test(.live) { client in
                try await body(APITest(client: client, store: TestStores(stores, sql: sql)), cluster, directory)
                watch?.enter("stopping the API and its pools")
            }
            watch?.enter("stopping PostgreSQL at the end")
        } catch {
            await cluster.stop(logger: logger)
            throw error
        }
        await cluster.stop(logger: logger)
    }
}
