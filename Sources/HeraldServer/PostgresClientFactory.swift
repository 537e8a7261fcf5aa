import HeraldStore
import Logging
import PostgresNIO

enum PostgresClientFactory {
    /// The pooled client the API and the workers share.
    static func make(_ url: DatabaseURL, poolSize: Int, logger: Logger) -> PostgresClient {
        PostgresClient(configuration: url.clientConfiguration(maximumConnections: poolSize), backgroundLogger: logger)
    }
}
