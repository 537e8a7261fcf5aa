import HTTPTypes
import HeraldCore
import Hummingbird
import Metrics

/// Applies each app's rate limit (``RateLimiter``) to the push endpoints: every answer to
/// a request authenticated as an app that has a limit carries `X-Rate-Limit-Limit`,
/// `-Remaining` and `-Reset` as JPush's do (only the push endpoints spend from it), and a
/// push request over the limit is answered 429 with JPush's code 2002 and
/// `Retry-After`, before its body is read. Requests whose credentials don't authenticate
/// an app pass through untouched, to be answered 401 by their route.
///
/// It sits outside the error middleware, so the headers go on error answers too.
/// Metric: `herald_rate_limited_total` (each 429 it answers).
struct RateLimitMiddleware<Context: RequestContext>: RouterMiddleware {
    let limiter: RateLimiter
    let auth: Authentication

    private let refused = Counter(label: "herald_rate_limited_total")

    /// The push endpoints: each call counts once, whatever it carries (a batch of a
    /// thousand pushes is one call, as at JPush).
    static func isLimited(_ request: Request) -> Bool {
        switch (request.method, request.uri.path) {
        case (.post, "/v3/push"), (.post, "/v3/push/validate"), (.post, "/v3/push/batch/regid/single"),
            (.post, "/v3/push/batch/alias/single"), (.post, "/v3/schedules"):
            true
        default: false
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard Self.isLimited(request) else {
            // Every answer to an app that has a limit carries the headers, as JPush's do;
            // only the push endpoints spend from it.
            var response = try await next(request, context)
            if request.headers[.authorization] != nil, let app = await auth.identifyApp(request),
                let headers = limiter.headers(app)
            {
                response.headers.setRateLimit(headers)
            }
            return response
        }
        guard let app = await auth.identifyApp(request) else {
            return try await next(request, context)
        }
        switch await limiter.admit(app) {
        case .unlimited:
            return try await next(request, context)
        case .admitted(let headers):
            var response = try await next(request, context)
            response.headers.setRateLimit(headers)
            return response
        case .refused(let headers, let wait):
            refused.increment()
            let seconds = max(1, Int(wait.timeInterval.rounded(.up)))
            var response = try HeraldError(
                .tooManyRequests,
                "rate limit: \(headers.limit) push requests a minute for this app; retry in \(seconds) s"
            ).response(retryAfter: seconds)
            response.headers.setRateLimit(headers)
            return response
        }
    }
}

extension HTTPField.Name {
    static let rateLimitLimit = Self("X-Rate-Limit-Limit")!
    static let rateLimitRemaining = Self("X-Rate-Limit-Remaining")!
    static let rateLimitReset = Self("X-Rate-Limit-Reset")!
}

extension HTTPFields {
    mutating func setRateLimit(_ headers: RateLimitHeaders) {
        self[.rateLimitLimit] = String(headers.limit)
        self[.rateLimitRemaining] = String(headers.remaining)
        self[.rateLimitReset] = String(headers.reset)
    }
}
