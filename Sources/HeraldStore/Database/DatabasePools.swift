import Logging
import PostgresNIO
import ServiceLifecycle

/// The API's pool: what it commits (an accepted push, a registered device, an operator's
/// change) is flushed to the WAL before the commit returns, so it survives a crash of the
/// database server. Run it as a service.
public struct DurablePool: Service {
    let client: PostgresClient

    /// - Parameter connectTimeout: how long one connection attempt may take.
    public init(url: DatabaseURL, maximumConnections: Int, connectTimeout: Duration = .seconds(5), logger: Logger) {
        client = PostgresClient(
            configuration: url.clientConfiguration(maximumConnections: maximumConnections, connectTimeout: connectTimeout),
            backgroundLogger: logger
        )
    }

    public func run() async {
        await client.run()
    }
}

/// The delivery pool of the gateway and the message center. Everything they write is
/// derived from durable data (an accepted push and its job) and redone when lost, so their
/// commits don't wait for the WAL flush (`synchronous_commit` off): PostgreSQL still writes
/// the WAL in order, so a crash can only lose a suffix of their commits, which leaves a job
/// unfinished, to be run again; a copy delivered twice that way is shown once (the SDK
/// deduplicates by message id, APNs by collapse id). Run it as a service.
public struct DeliveryPool: Service {
    let client: PostgresClient

    /// - Parameter connectTimeout: how long one connection attempt may take.
    public init(url: DatabaseURL, maximumConnections: Int, connectTimeout: Duration = .seconds(5), logger: Logger) {
        client = PostgresClient(
            configuration: url.clientConfiguration(
                maximumConnections: maximumConnections,
                synchronousCommit: false,
                connectTimeout: connectTimeout
            ),
            backgroundLogger: logger
        )
    }

    public func run() async {
        await client.run()
    }
}

/// The pool of the event log's readers: the event stream of the API, the webhook
/// dispatcher and the callback worker. Apart from the other two so that a slow webhook
/// endpoint or many stream readers never take a connection a push or a delivery needs.
/// Its commits (a webhook's cursor) are durable: a cursor lost would send events again.
/// Run it as a service.
public struct EventsPool: Service {
    let client: PostgresClient

    /// - Parameter connectTimeout: how long one connection attempt may take.
    public init(url: DatabaseURL, maximumConnections: Int, connectTimeout: Duration = .seconds(5), logger: Logger) {
        client = PostgresClient(
            configuration: url.clientConfiguration(maximumConnections: maximumConnections, connectTimeout: connectTimeout),
            backgroundLogger: logger
        )
    }

    public func run() async {
        await client.run()
    }
}
