import HeraldCore
import HeraldStore

/// Settings of the HTTP API.
public struct APIConfiguration: Sendable {
    /// Address to listen on.
    public var host: String
    /// Port to listen on (0 picks a free one).
    public var port: Int
    /// Largest request body accepted, in bytes.
    public var maxBodySize: Int
    /// Bearer token of the admin API.
    public var adminToken: String
    /// How long after sending a message can be recalled (``NodeConfiguration/recallWindow``).
    public var recallWindow: Duration
    /// Where the message center sends APNs traffic, said wherever credentials are shown.
    public var apnsDestination: APNsDestination = .apple
    /// The database, checked with a fresh connection once a request has waited
    /// ``databaseWait``: if it refuses, the request is answered 503 instead of waiting on
    /// the pool. Nil: requests wait as long as the pool holds them.
    public var databaseURL: DatabaseURL?
    /// How long a request may wait before the database is checked (again).
    public var databaseWait: Duration
    /// Budgets of failed authentications (see ``AuthFailureThrottle``).
    public var authFailures: AuthFailureBudgets
    /// A connection with no request in progress is closed after this long.
    public var idleTimeout: Duration
    /// A request must arrive whole, head and body, within this long of its first byte,
    /// or its connection is closed.
    public var requestTimeout: Duration
    /// The push endpoints' rate limits (see ``RateLimiter``).
    public var rateLimit = RateLimitConfiguration()
    /// Rows of a device import written per batch (one transaction, a few statements).
    public var importBatchSize = 2_000
    /// The addresses webhook, callback and SMS provider URLs may name
    /// (``NodeConfiguration/outbound``): a literal address outside them is refused.
    public var outbound = OutboundAddressRule()
    /// Whether changes through the API are written to the audit log (always, in `herald
    /// serve`; a benchmark turns it off to measure what it costs).
    public var audit = true
    /// How long a person's session lasts from their sign-in.
    public var sessionLifetime: Duration = .seconds(12 * 3600)
    /// APNs credentials tried before the console saves them (``APNsDryRun`` of the node's
    /// APNs routing): nil when APNs took them, else why not. Nil: not tried.
    public var apnsCheck: (@Sendable (APNsCredentials) async -> String?)?
    /// An FCM service account tried at its token endpoint before it is stored (where the
    /// center will ask): nil when it took it, else why not. Nil: not tried.
    public var fcmCheck: (@Sendable (FCMServiceAccount) async -> String?)?
    /// Signing in through an OpenID Connect provider; nil: passwords only.
    public var oidc: OIDCConfiguration?

    public init(
        host: String = "0.0.0.0",
        port: Int = 8080,
        maxBodySize: Int = 1 << 20,
        adminToken: String,
        recallWindow: Duration = NodeConfiguration.defaultRecallWindow,
        databaseURL: DatabaseURL? = nil,
        databaseWait: Duration = DatabaseConfiguration().wait,
        authFailures: AuthFailureBudgets = .init(),
        idleTimeout: Duration = .seconds(60),
        requestTimeout: Duration = .seconds(30)
    ) {
        self.host = host
        self.port = port
        self.maxBodySize = maxBodySize
        self.adminToken = adminToken
        self.recallWindow = recallWindow
        self.databaseURL = databaseURL
        self.databaseWait = databaseWait
        self.authFailures = authFailures
        self.idleTimeout = idleTimeout
        self.requestTimeout = requestTimeout
    }
}

/// The budgets of the API's failed-authentication throttle.
public typealias AuthFailureBudgets = AuthFailureThrottle<ContinuousClock.Instant>.Configuration
