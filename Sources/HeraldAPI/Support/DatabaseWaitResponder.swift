import Hummingbird

/// Bounds how long a request waits on a database that is down. PostgreSQL's pool keeps a
/// request queued while it retries a failing connection (up to a minute); here, once a
/// request has waited `wait`, and every `wait` after, a fresh connection is tried, and if
/// PostgreSQL refuses it the request is cancelled, which takes it out of the pool's queue,
/// and answered 503 (`unavailable`, with `Retry-After`) by the error middleware.
///
/// A slow request on a database that does accept connections is left alone: cancelling
/// it could fail a commit other requests share.
struct DatabaseWaitResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context == HeraldRequestContext {
    let inner: Inner
    let wait: Duration
    let reachability: DatabaseReachability

    func respond(to request: Request, context: HeraldRequestContext) async throws -> Response {
        try await withThrowingTaskGroup(of: Response?.self) { group in
            group.addTask { try await inner.respond(to: request, context: context) }
            group.addTask {
                while true {
                    try await Task.sleep(for: wait)
                    if await !reachability.isReachable() { return nil }
                }
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let response = result { return response }
                // The database is down: the request, cancelled, answers 503.
                group.cancelAll()
            }
            throw CancellationError()
        }
    }
}
