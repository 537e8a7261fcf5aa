import NIOConcurrencyHelpers

/// Wakes idle workers: a NOTIFY on the jobs channel, a poll tick, or shutdown. Each worker
/// has its own stream holding at most one pending wake-up, so signals coalesce.
public final class WakeSignal: Sendable {
    public init() {}

    private let continuations = NIOLockedValueBox<[AsyncStream<Void>.Continuation]>([])

    /// A new worker's stream of wake-ups.
    public func subscribe() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        continuations.withLockedValue { $0.append(continuation) }
        return stream
    }

    public func signal() {
        for continuation in continuations.withLockedValue({ $0 }) { continuation.yield() }
    }

    /// Ends every stream: workers stop waiting.
    public func finish() {
        for continuation in continuations.withLockedValue({ $0 }) { continuation.finish() }
    }
}
