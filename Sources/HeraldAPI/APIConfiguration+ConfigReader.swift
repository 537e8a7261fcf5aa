import Configuration
import HeraldCore
import HeraldStore

extension APIConfiguration {
    /// Reads the HTTP API's settings from Herald's configuration.
    ///
    /// Configuration keys:
    /// - `http.host` (string, default: `0.0.0.0`): address to listen on.
    /// - `http.port` (int, default: 8080): port to listen on (0: a free one).
    /// - `http.maxBodySize` (int, bytes, default: 1048576, at least 1024): largest request body.
    /// - `http.requestTimeout` (int, seconds, default: 30, 1 to 3600): a request must arrive
    ///   whole within this long of its first byte.
    /// - `http.idleTimeout` (int, seconds, default: 60, 1 to 3600): a connection with no
    ///   request in progress is closed after this long.
    /// - `auth.failuresPerKeyAndAddress` (int, default: 10, 0 or more; 0: no limit): failed
    ///   authentications one address may have for one key within the window.
    /// - `auth.failuresPerAddress` (int, default: 50, 0 or more): the same for one address,
    ///   whatever the key.
    /// - `auth.failuresPerKey` (int, default: 200, 0 or more): the same for one key, from
    ///   every address.
    /// - `auth.failureWindow` (int, seconds, default: 60, 1 to 86400): how long failures count.
    /// - `auth.capacity` (int, default: 100000, 1000 to 10000000): keys and addresses the
    ///   throttle keeps at most.
    /// - `auth.sessionLifetime` (int, seconds, default: 43200, 300 to 2592000): how long a
    ///   person's session lasts from their sign-in.
    /// - `oidc.*`: signing in through an OpenID Connect provider (see
    ///   ``OIDCConfiguration/init(reader:)``).
    /// - `api.rateLimit.perMinute` (int, default: 0, 0 or more; 0: none): push requests a
    ///   minute an app may make when it has no limit of its own
    ///   (`PATCH /admin/v1/apps/{app_key}`, `rate_limit_per_minute`); the limit is a token
    ///   bucket every node shares.
    ///
    /// Not read here: the admin token (the server sets ``adminToken`` from `admin.token`, or
    /// one generated into its data directory), ``databaseURL`` (the database actually used,
    /// perhaps the embedded one) and ``apnsDestination`` (`apns.sandbox`).
    ///
    /// - Parameters:
    ///   - reader: Herald's configuration (not scoped: the keys are at its root).
    ///   - node: the node's shared settings; the API takes the recall window and the outbound
    ///     address rule from it.
    ///   - database: the database settings; the API takes ``DatabaseConfiguration/wait``.
    /// - Throws: ``ConfigurationError`` naming the key of a value out of range.
    public init(reader: ConfigReader, node: NodeConfiguration, database: DatabaseConfiguration) throws {
        let http = ConfigSection(reader, "http")
        let defaults = APIConfiguration(adminToken: "")
        let rateLimit = ConfigSection(reader, "api").section("rateLimit")
        self.init(
            host: http.string("host", default: defaults.host),
            port: try http.port("port", default: defaults.port),
            maxBodySize: try http.int("maxBodySize", default: defaults.maxBodySize, in: 1024...Int.max, problem: "at least 1024 bytes"),
            adminToken: "",
            recallWindow: node.recallWindow,
            databaseWait: database.wait,
            authFailures: try AuthFailureBudgets(reader: reader),
            idleTimeout: try http.seconds("idleTimeout", default: defaults.idleTimeout, in: 1...3600),
            requestTimeout: try http.seconds("requestTimeout", default: defaults.requestTimeout, in: 1...3600)
        )
        self.outbound = node.outbound
        self.oidc = try OIDCConfiguration(reader: reader)
        self.sessionLifetime = try ConfigSection(reader, "auth").seconds("sessionLifetime", default: defaults.sessionLifetime, in: 300...2_592_000)
        self.rateLimit = RateLimitConfiguration(
            defaultPerMinute: try rateLimit.int("perMinute", default: 0, in: 0...Int.max, problem: "must be 0 (no limit) or more")
        )
    }
}

extension AuthFailureThrottle.Configuration {
    /// Reads the budgets of failed authentications, the `auth.*` keys listed at
    /// ``APIConfiguration/init(reader:node:database:)``, from Herald's configuration.
    init(reader: ConfigReader) throws {
        let auth = ConfigSection(reader, "auth")
        let defaults = Self()
        let noLimit = "must be 0 (no limit) or more"
        self.init(
            perKeyAndAddress: try auth.int("failuresPerKeyAndAddress", default: defaults.perKeyAndAddress, in: 0...Int.max, problem: noLimit),
            perAddress: try auth.int("failuresPerAddress", default: defaults.perAddress, in: 0...Int.max, problem: noLimit),
            perKey: try auth.int("failuresPerKey", default: defaults.perKey, in: 0...Int.max, problem: noLimit),
            window: try auth.seconds("failureWindow", default: defaults.window, in: 1...86_400),
            capacity: try auth.int("capacity", default: defaults.capacity, in: 1000...10_000_000)
        )
    }
}
