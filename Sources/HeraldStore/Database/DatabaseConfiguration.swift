/// The database Herald runs on, and its connection pools.
public struct DatabaseConfiguration: Sendable, Hashable {
    /// The PostgreSQL URL (`postgres://user:password@host:port/db?sslmode=...`); nil starts
    /// the embedded cluster. Parsed when Herald starts (``DatabaseURL``).
    public var url: String?
    /// Connections of the API's pool.
    public var poolSize: Int
    /// Connections of the gateway and message center's pool.
    public var deliveryPoolSize: Int
    /// Connections of the event log's readers (event stream, webhooks, callbacks).
    public var eventsPoolSize: Int
    /// How long an API request waits on a database that doesn't answer before the
    /// database is checked with a fresh connection (answered 503 if that is refused).
    public var wait: Duration
    /// PostgreSQL binaries for the embedded cluster; found automatically when nil.
    public var postgresBinDirectory: String?

    public init(
        url: String? = nil,
        poolSize: Int = 20,
        deliveryPoolSize: Int? = nil,
        eventsPoolSize: Int = 4,
        wait: Duration = .seconds(5),
        postgresBinDirectory: String? = nil
    ) {
        self.url = url
        self.poolSize = poolSize
        self.deliveryPoolSize = deliveryPoolSize ?? poolSize
        self.eventsPoolSize = eventsPoolSize
        self.wait = wait
        self.postgresBinDirectory = postgresBinDirectory
    }
}
