import NIOConcurrencyHelpers

/// `operation`'s result, or the error `watch` throws first, without waiting for
/// `operation` to end: for work that may never return and may ignore cancellation. A query
/// cut off by PostgreSQL going away has been seen never to end, even after PostgreSQL was
/// back, and not to end when cancelled either (postgres-nio 1.33): awaited in a task group,
/// it held its caller, and a node's shutdown, for good.
///
/// `watch` runs beside the operation and is cancelled when the operation ends; if it
/// returns without throwing, the operation is awaited alone. The abandoned operation is
/// cancelled and left to end by itself, in an unstructured task: structured concurrency
/// would wait for it. Whatever it still does must be harmless (fenced by a lease, say).
public func abandoning<Result: Sendable>(
    _ operation: @escaping @Sendable () async throws -> Result,
    when watch: @escaping @Sendable () async throws -> Void
) async throws -> Result {
    let pending = NIOLockedValueBox<CheckedContinuation<Result, any Error>?>(nil)
    let tasks = NIOLockedValueBox<[Task<Void, Never>]>([])
    @Sendable func finish(_ result: Swift.Result<Result, any Error>) {
        let continuation = pending.withLockedValue { value in
            defer { value = nil }
            return value
        }
        guard let continuation else { return }
        continuation.resume(with: result)
        for task in tasks.withLockedValue({ $0 }) { task.cancel() }
    }
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            pending.withLockedValue { $0 = continuation }
            let work = Task {
                do {
                    finish(.success(try await operation()))
                } catch {
                    finish(.failure(error))
                }
            }
            let watcher = Task {
                do {
                    try await watch()
                } catch {
                    finish(.failure(error))
                }
            }
            tasks.withLockedValue { $0 = [work, watcher] }
        }
    } onCancel: {
        finish(.failure(CancellationError()))
    }
}

/// The deadline ``abandoning(_:when:)`` watches for.
public struct TimedOut: Error {}

/// `operation`'s result, or ``TimedOut`` after `timeout` without waiting for it to end
/// (``abandoning(_:when:)``).
public func abandoning<Result: Sendable>(
    after timeout: Duration,
    _ operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await abandoning(operation) {
        try await Task.sleep(for: timeout)
        throw TimedOut()
    }
}
