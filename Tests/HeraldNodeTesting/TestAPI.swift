import HeraldAPI
import HeraldStore
import HeraldTestSupport
import Hummingbird
import Prometheus

/// The HTTP API alone on a database, wired as a node wires it (the store's two pools run as
/// its services): for the tests of the API and of heraldctl, which need no gateway or center.
public enum TestAPI {
    /// Runs `body` with the application, not started yet (start it with HummingbirdTesting's
    /// `test(_:_:)`), and the node's store on `url` with a client of the test's own.
    public static func withApplication<Result: Sendable>(
        _ url: DatabaseURL,
        configuration: APIConfiguration,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        _ body: @Sendable (any ApplicationProtocol, TestStores) async throws -> Result
    ) async throws -> Result {
        let (stores, pools) = TestDatabase.makeStores(url)
        let app = buildApplication(
            configuration: configuration,
            store: stores.api,
            registry: registry,
            services: pools,
            logger: TestDatabase.logger
        )
        return try await TestDatabase.withClient(url) { sql in
            try await body(app, TestStores(stores, sql: sql))
        }
    }
}
