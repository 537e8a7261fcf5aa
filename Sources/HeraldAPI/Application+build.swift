import HeraldCore
import HeraldStore
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle

/// Builds the router with every route of the Open API, and the table of those routes.
public func buildRouter(
    configuration: APIConfiguration,
    store: APIStore,
    events: EventStore? = nil,
    registry: PrometheusCollectorRegistry,
    fannedOutPushes sink: (any FannedOutPushSink)? = nil,
    outbound: (any OutboundPosting)? = nil,
    draining: @escaping @Sendable () -> Bool = { false }
) -> (router: Router<HeraldRequestContext>, routes: RouteTable) {
    let router = Router(context: HeraldRequestContext.self)
    var routes = RouteRegistrar(router: router, table: RouteTable(), audit: configuration.audit ? AuditRecorder(store: store) : nil)
    let verified = VerifiedCredentials()
    let auth = Authentication(store: store, adminToken: configuration.adminToken, verified: verified)
    let body = JSONBody(maxSize: configuration.maxBodySize)

    // Middleware is captured when a route is added, so it goes first. The error middleware
    // reads the finished table through a box filled in below.
    let table = RouteTableBox()
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: LogRequestsMiddleware(.debug))
    let throttle = AuthThrottleMiddleware<HeraldRequestContext>(configuration: configuration.authFailures, verified: verified)
    router.add(middleware: throttle)
    let limiter = RateLimiter(store: store, configuration: configuration.rateLimit, logger: Logger(label: "herald.api.rate-limit"))
    router.add(middleware: RateLimitMiddleware(limiter: limiter, auth: auth))
    router.add(middleware: ErrorMiddleware(routes: table))

    OperationsRoutes(store: store, registry: registry, draining: draining).register(on: &routes)
    AdminRoutes(
        store: store,
        auth: auth,
        body: body,
        apnsDestination: configuration.apnsDestination,
        defaultRateLimit: configuration.rateLimit.defaultPerMinute
    ).register(on: &routes)
    FCMRoutes(store: store, auth: auth, body: body, check: configuration.fcmCheck).register(on: &routes)
    DeviceRoutes(store: store, auth: auth, body: body).register(on: &routes)
    ReceiptRoutes(store: store, auth: auth, body: body).register(on: &routes)
    DeviceImportRoutes(store: store, auth: auth, batchSize: configuration.importBatchSize).register(on: &routes)
    AliasRoutes(store: store, auth: auth, body: body).register(on: &routes)
    TagRoutes(store: store, auth: auth, body: body).register(on: &routes)
    let acceptor = PushAcceptor(store: store, sink: sink)
    let pushes = PushRoutes(
        store: store,
        acceptor: acceptor,
        auth: auth,
        body: body,
        recallWindow: configuration.recallWindow,
        outbound: configuration.outbound
    )
    pushes.register(on: &routes)
    // The two-person rule, and people: sessions, the admin API's users (issue #30).
    ApprovalRoutes(store: store, pushes: pushes, auth: auth, body: body).register(on: &routes)
    SessionRoutes(store: store, auth: auth, body: body, lifetime: configuration.sessionLifetime).register(on: &routes)
    UserRoutes(store: store, auth: auth, body: body).register(on: &routes)
    OIDCRoutes(store: store, provider: configuration.oidc.map { OIDCProvider(configuration: $0) }, lifetime: configuration.sessionLifetime)
        .register(on: &routes)
    // The web console (issue #31).
    let schedules = ScheduleRoutes(store: store, auth: auth, body: body, outbound: configuration.outbound)
    ConsoleRoutes(
        store: store,
        auth: auth,
        pages: ConsolePages(),
        pushes: pushes,
        schedules: schedules,
        throttle: throttle,
        lifetime: configuration.sessionLifetime,
        apnsDestination: configuration.apnsDestination,
        apnsCheck: configuration.apnsCheck,
        fcmCheck: configuration.fcmCheck,
        oidcName: configuration.oidc?.name
    ).register(on: &routes)
    ReportRoutes(store: store, auth: auth, body: body).register(on: &routes)
    // JPush's v3 routes beyond push, devices and tags.
    DevicePresenceRoutes(store: store, auth: auth, body: body).register(on: &routes)
    LiveActivityRoutes(store: store, auth: auth, body: body).register(on: &routes)
    AppSMSRoutes(store: store, auth: auth, body: body, outbound: configuration.outbound).register(on: &routes)
    PushPoolRoutes(auth: auth).register(on: &routes)
    BatchPushRoutes(store: store, acceptor: acceptor, auth: auth, body: body, outbound: configuration.outbound).register(on: &routes)
    JPushReportRoutes(store: store, auth: auth, body: body).register(on: &routes)
    DiagnosisRoutes(store: store, auth: auth, apnsDestination: configuration.apnsDestination).register(on: &routes)
    // Schedules (JPush's Schedule API) and the app's zone for them.
    schedules.register(on: &routes)
    AppTimeZoneRoutes(store: store, auth: auth, body: body).register(on: &routes)
    // The delivery event log: the stream, timelines, event settings and webhooks.
    let eventLog = events ?? store.eventLog
    EventRoutes(store: store, events: eventLog, auth: auth, body: body).register(on: &routes)
    WebhookRoutes(store: store, events: eventLog, auth: auth, body: body, rule: configuration.outbound, outbound: outbound)
        .register(on: &routes)
    // API keys: an app's scoped keys, the admin API's (issue #30).
    KeyRoutes(store: store, auth: auth, body: body).register(on: &routes)
    AuditRoutes(store: store, auth: auth).register(on: &routes)
    // Notification categories (issue #20).
    CategoryRoutes(store: store, acceptor: acceptor, auth: auth, body: body).register(on: &routes)
    table.set(routes.table)
    return (router, routes.table)
}

/// The HTTP application: the router, served on the configured address, with `services`
/// (the store's pools among them) running beside it; with
/// ``APIConfiguration/databaseURL``, a request stuck on a database that is down is
/// answered 503 after ``APIConfiguration/databaseWait``. `fannedOutPushes`: the message
/// center running in this process, which takes the pushes accepted here straight from
/// their commit (see ``FannedOutPushSink``).
public func buildApplication(
    configuration: APIConfiguration,
    store: APIStore,
    events: EventStore? = nil,
    registry: PrometheusCollectorRegistry,
    services: [any Service] = [],
    fannedOutPushes sink: (any FannedOutPushSink)? = nil,
    outbound: (any OutboundPosting)? = nil,
    draining: @escaping @Sendable () -> Bool = { false },
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in },
    logger: Logger
) -> some ApplicationProtocol {
    let (router, _) = buildRouter(
        configuration: configuration,
        store: store,
        events: events,
        registry: registry,
        fannedOutPushes: sink,
        outbound: outbound,
        draining: draining
    )
    var responder = AnyResponder(router.buildResponder())
    var services = services
    if configuration.audit { services.append(AuditSealer(store: store)) }
    if let url = configuration.databaseURL {
        // The fresh connection gets as long as the pool's wait, at least 2 s: a server
        // that is up but loaded takes seconds to start a backend, a frozen one never does
        // (a 2 s check answered 503 to a loaded test machine's healthy database).
        let reachability = DatabaseReachability(url: url, timeout: max(.seconds(2), configuration.databaseWait), logger: logger)
        let watch = DatabaseWaitWatch(wait: configuration.databaseWait, reachability: reachability)
        responder = AnyResponder(DatabaseWaitResponder(inner: responder, watch: watch))
        services.append(watch)
    }
    let deadlines = HTTPDeadlines<ContinuousClock.Instant>.Configuration(
        idleTimeout: configuration.idleTimeout,
        requestTimeout: configuration.requestTimeout,
        lingerTimeout: .seconds(2)
    )
    return Application(
        responder: responder,
        server: HTTPServerBuilder { responder in HeraldHTTPChannel(responder: responder, deadlines: deadlines) },
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "herald"),
        services: services,
        onServerRunning: onServerRunning,
        logger: logger
    )
}
