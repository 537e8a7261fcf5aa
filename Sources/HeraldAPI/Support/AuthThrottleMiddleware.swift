import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import Metrics
import NIOConcurrencyHelpers

/// Applies an ``AuthFailureThrottle`` to every request that carries credentials: refuses
/// (429, `too_many_requests`, `Retry-After`) an address that has failed too often before
/// its credentials are checked, unless they are credentials that authenticated lately
/// (``VerifiedCredentials``: the right secret keeps working behind an address a guesser or
/// a misconfigured client shares); counts every 401 as a failure of the key it named (the
/// app key, registration id, or `admin` for the bearer token), once per distinct header.
/// Failures are not forgiven on a success: which route checked which credentials is not
/// known here, and a 200 from a route that checks none must not reset a guesser's count.
///
/// Metrics: `herald_auth_failures_total` (each 401) and `herald_auth_throttled_total`
/// (each 429 it answers).
struct AuthThrottleMiddleware<Context: RequestContext & RemoteAddressRequestContext>: RouterMiddleware {
    let throttle: NIOLockedValueBox<AuthFailureThrottle<ContinuousClock.Instant>>
    let clock: @Sendable () -> ContinuousClock.Instant
    let verified: VerifiedCredentials

    init(
        configuration: AuthFailureThrottle<ContinuousClock.Instant>.Configuration,
        verified: VerifiedCredentials,
        clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.throttle = NIOLockedValueBox(AuthFailureThrottle(configuration: configuration))
        self.verified = verified
        self.clock = clock
    }

    private let failures = Counter(label: "herald_auth_failures_total")
    private let throttled = Counter(label: "herald_auth_throttled_total")

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let authorization = request.headers[.authorization] else {
            return try await next(request, context)
        }
        let address = context.remoteAddress?.ipAddress ?? "unknown"
        // An address that hasn't failed lately (nearly every request) costs one lookup; its
        // header is read only when it has. (A refusal the lookup misses still comes from
        // `failed` below, after the credentials.)
        if throttle.withLockedValue({ $0.hasFailures(address: address) }) {
            let key = Self.key(authorization)
            if case .refuse(let wait) = throttle.withLockedValue({ $0.admit(key: key, address: address, now: clock()) }),
                !verified.contains(authorization)
            {
                return try refusal(wait)
            }
        }
        let response = try await next(request, context)
        if response.status == .unauthorized {
            failures.increment()
            let key = Self.key(authorization)
            let credentials = authorization.hashValue
            if case .refuse(let wait) = throttle.withLockedValue({ $0.failed(key: key, address: address, credentials: credentials, now: clock()) }) {
                return try refusal(wait)
            }
        }
        return response
    }

    /// A sign-in that carries its credentials in a form (the console's), counted as a
    /// header's are: the time to wait when `key` (an email) may not try from `address`
    /// now, else nil.
    func admitSignIn(key: String, address: String) -> Duration? {
        guard case .refuse(let wait) = throttle.withLockedValue({ $0.admit(key: key, address: address, now: clock()) }) else { return nil }
        throttled.increment()
        return wait
    }

    /// The form's credentials were wrong: counted; the time to wait when that spent a
    /// budget, else nil.
    func signInFailed(key: String, address: String, credentials: Int) -> Duration? {
        failures.increment()
        guard case .refuse(let wait) = throttle.withLockedValue({ $0.failed(key: key, address: address, credentials: credentials, now: clock()) })
        else { return nil }
        throttled.increment()
        return wait
    }

    private func refusal(_ wait: Duration) throws -> Response {
        throttled.increment()
        let seconds = max(1, Int(wait.timeInterval.rounded(.up)))
        return try HeraldError(.tooManyRequests, "too many failed authentications; retry in \(seconds) s").response(retryAfter: seconds)
    }

    /// Whose credentials the header names: the Basic user (app key, registration id, or a
    /// person's email signing in), the id of a bearer key or session (`hka_…`, `hks_…`),
    /// `admin` for any other bearer token, or the empty key for anything else.
    static func key(_ authorization: String) -> String {
        if authorization.hasPrefix("Bearer ") {
            let token = String(authorization.dropFirst("Bearer ".count))
            return APIKeyText.keyID(of: token) ?? APIKeyText.id(of: token, prefix: APIKeyText.sessionPrefix) ?? "admin"
        }
        return BasicCredentials(authorization: authorization).map { String($0.user.prefix(64)) } ?? ""
    }
}
