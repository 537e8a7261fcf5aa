import HeraldCore

/// Who may call a route: declared where the route is registered
/// (``RouteRegistrar/on(_:_:access:use:)``), so every route has one, and kept in the
/// ``RouteTable``. ``Authentication`` reads the access of the route being served and
/// refuses credentials it doesn't admit: a key without the scope, device credentials on an
/// app-only route, anything on a route that declared none (fail closed).
public enum RouteAccess: Sendable, Hashable, CustomStringConvertible {
    /// No credentials: health, metrics, the OpenAPI document, and a device's registration
    /// (its app key in the body).
    case open
    /// The admin API: the admin token, or an admin key.
    case admin
    /// The app's master secret (while enabled), or one of its keys holding the scope.
    case app(Scope)
    /// As ``app(_:)``, or the device itself (`registration_id:device_secret`) acting on
    /// its own registration.
    case appOrDevice(Scope)
    /// A person's own session (`Bearer hks_…`), whatever their roles: who they are,
    /// signing out, confirming their password.
    case person
    /// A person signing in (their email and password, or an OpenID Connect provider's
    /// answer): no credentials yet, but audited, success or not.
    case signIn
    /// The web console's pages: a person's session from its cookie (without one, the page
    /// sends them to sign in); their role on an app decides what it shows.
    case console

    /// The scope an app key needs, if the route admits app keys.
    public var scope: Scope? {
        switch self {
        case .open, .admin, .person, .signIn, .console: nil
        case .app(let scope), .appOrDevice(let scope): scope
        }
    }

    public var description: String {
        switch self {
        case .open: "open"
        case .admin: "admin"
        case .app(let scope): "app \(scope.rawValue)"
        case .appOrDevice(let scope): "app \(scope.rawValue) or the device"
        case .person: "a person's session"
        case .signIn: "signing in"
        case .console: "the console's session"
        }
    }

    /// The route being served: its access, the client's address, and what its audit
    /// entry gathers (nil when the request is not audited: nothing is gathered).
    struct Serving: Sendable {
        var access: RouteAccess
        var remoteAddress: IPAddress?
        var audit: RequestAudit?
        /// A destructive route: a person must have confirmed their password lately
        /// (``Authentication/confirmationWindow``); keys and secrets are not asked.
        var confirm = false
    }

    /// Set by ``RouteRegistrar`` around each handler; nil outside one (a middleware).
    @TaskLocal static var serving: Serving?
}
