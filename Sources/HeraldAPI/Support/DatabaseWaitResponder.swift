import Hummingbird

/// Bounds how long a request waits on a database that is down. PostgreSQL's pool keeps a
/// request queued while it retries a failing connection (up to a minute); here, once a
/// request has waited the watch's `wait`, a fresh connection is tried (``DatabaseWaitWatch``),
/// and if PostgreSQL refuses it the request is cancelled, which takes it out of the pool's
/// queue, and answered 503 (`unavailable`, with `Retry-After`) by the error middleware.
///
/// A slow request on a database that does accept connections is left alone: cancelling
/// it could fail a commit other requests share.
struct DatabaseWaitResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context == HeraldRequestContext {
    let inner: Inner
    let watch: DatabaseWaitWatch

    func respond(to request: Request, context: HeraldRequestContext) async throws -> Response {
        try await withThrowingTaskGroup(of: Response?.self) { group in
            group.addTask { try await inner.respond(to: request, context: context) }
            group.addTask {
                await watch.untilDatabaseIsDown()
                return nil
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let response = result { return response }
                // The database is down: the request, cancelled, answers 503 (if it was
                // answered meanwhile, the group was cancelled and the watch let it go).
                group.cancelAll()
            }
            throw CancellationError()
        }
    }
}
