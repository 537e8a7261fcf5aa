import HeraldStore
import Logging
import PostgresNIO

enum PostgresClientFactory {
    /// The API's pool: accepting a push, registering a device, any operator change is
    /// committed durably (synchronous commit) before the answer.
    static func make(_ url: DatabaseURL, poolSize: Int, logger: Logger) -> PostgresClient {
        PostgresClient(configuration: url.clientConfiguration(maximumConnections: poolSize), backgroundLogger: logger)
    }

    /// The delivery pool of the gateway and the message center. Everything they write is
    /// derived from durable data (an accepted push and its job) and redone when lost, so
    /// their commits don't wait for the WAL flush (synchronous_commit off): PostgreSQL
    /// still writes the WAL in order, so a crash can only lose a suffix of their commits,
    /// which leaves the job unfinished, to be run again; a copy delivered twice that way
    /// is shown once (the SDK deduplicates by message id, APNs by collapse id).
    static func makeDelivery(_ url: DatabaseURL, poolSize: Int, logger: Logger) -> PostgresClient {
        PostgresClient(
            configuration: url.clientConfiguration(maximumConnections: poolSize, synchronousCommit: false),
            backgroundLogger: logger
        )
    }
}
