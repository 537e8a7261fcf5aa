import Configuration
import HeraldCore

extension DatabaseConfiguration {
    /// Reads the database settings from Herald's configuration.
    ///
    /// Configuration keys:
    /// - `database.url` (string, secret, optional): the PostgreSQL URL; unset or empty
    ///   starts the embedded cluster.
    /// - `database.poolSize` (int, default: 20, 1 to 1000): connections of the API's pool,
    ///   and of the delivery pool unless `database.deliveryPoolSize` is set.
    /// - `database.deliveryPoolSize` (int, default: `database.poolSize`, 1 to 1000):
    ///   connections of the gateway and message center's pool.
    /// - `database.eventsPoolSize` (int, default: 4, 1 to 100): connections of the event log's
    ///   readers (the event stream, webhooks and callbacks), apart from pushes and delivery.
    /// - `database.wait` (int, seconds, default: 5, 1 to 60): how long an API request waits
    ///   on a database that doesn't answer before it is checked.
    /// - `postgres.binDir` (string, optional): PostgreSQL binaries for the embedded cluster.
    ///
    /// - Parameter reader: Herald's configuration (not scoped: the keys are at its root).
    /// - Throws: ``ConfigurationError`` naming the key of a value out of range.
    public init(reader: ConfigReader) throws {
        let database = ConfigSection(reader, "database")
        let defaults = DatabaseConfiguration()
        let poolSize = try database.int("poolSize", default: defaults.poolSize, in: 1...1000)
        self.init(
            url: database.optionalString("url", isSecret: true),
            poolSize: poolSize,
            deliveryPoolSize: try database.int("deliveryPoolSize", default: poolSize, in: 1...1000),
            eventsPoolSize: try database.int("eventsPoolSize", default: defaults.eventsPoolSize, in: 1...100),
            wait: try database.seconds("wait", default: defaults.wait, in: 1...60),
            postgresBinDirectory: reader.string(forKey: "postgres.binDir")
        )
    }
}
