import HeraldCore
import Hummingbird
import Logging
import NIOConcurrencyHelpers

/// Bounds how long a request waits on a database that is down or frozen. PostgreSQL's
/// pool keeps a request queued while it retries a failing connection (up to a minute), and
/// a server whose processes are stopped answers nothing at all; here, once a request has
/// waited the watch's `wait`, a fresh connection is tried (``DatabaseWaitWatch``), and if
/// PostgreSQL doesn't accept it the request is answered 503 (`unavailable`, with
/// `Retry-After`) at once, and its work is cancelled.
///
/// The answer doesn't wait for the work to end: a statement on a frozen server ends only
/// when the server runs again, and a push waiting on its group commit can't be taken back
/// from it. The work is cancelled, which takes a request out of the pool's queue; a push
/// whose commit was already sent may still be accepted once PostgreSQL runs again, and
/// is delivered then (a 503 says the outcome is unknown: retry with the same `cid`). Work
/// cancelled before it read the request's body never reads it (``JSONBody``), as the
/// connection reads it on to the next request.
///
/// A slow request on a database that does accept connections is left alone.
struct DatabaseWaitResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context == HeraldRequestContext {
    let inner: Inner
    let watch: DatabaseWaitWatch

    func respond(to request: Request, context: HeraldRequestContext) async throws -> Response {
        let answer = FirstAnswer()
        let work = Task {
            do {
                answer.give(.success(try await inner.respond(to: request, context: context)))
            } catch {
                answer.give(.failure(error))
            }
        }
        return try await withTaskCancellationHandler {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    await watch.untilDatabaseIsDown()
                    guard !Task.isCancelled else { return }
                    let response = try HeraldError(.unavailable, "the database is unavailable; retry later").response(from: request, context: context)
                    if answer.give(.success(response)) {
                        context.logger.warning("request answered 503: the database accepts no connection")
                        work.cancel()
                    }
                }
                defer { group.cancelAll() }
                return try await answer.value()
            }
        } onCancel: {
            work.cancel()
        }
    }
}

/// The first of two answers to a request (its work's, or the 503 of a database that is
/// down), handed to the one task waiting for it.
private final class FirstAnswer: Sendable {
    private struct State {
        var result: Result<Response, any Error>?
        var waiting: CheckedContinuation<Response, any Error>?
    }

    private let state = NIOLockedValueBox(State())

    /// Gives `result` unless an answer was given already; true when it was this one.
    @discardableResult
    func give(_ result: Result<Response, any Error>) -> Bool {
        let (given, waiting) = state.withLockedValue { state -> (Bool, CheckedContinuation<Response, any Error>?) in
            guard state.result == nil else { return (false, nil) }
            state.result = result
            defer { state.waiting = nil }
            return (true, state.waiting)
        }
        waiting?.resume(with: result)
        return given
    }

    func value() async throws -> Response {
        try await withCheckedThrowingContinuation { continuation in
            let result = state.withLockedValue { state -> Result<Response, any Error>? in
                if state.result == nil { state.waiting = continuation }
                return state.result
            }
            if let result { continuation.resume(with: result) }
        }
    }
}
