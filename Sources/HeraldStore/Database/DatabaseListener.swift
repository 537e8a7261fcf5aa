import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import ServiceLifecycle

/// The node's one LISTEN connection. Each part woken by a NOTIFY (the center's workers by
/// a committed job, the scheduler by a changed schedule, the cluster membership by its
/// channels) subscribes to its channel here, before the node runs; this service keeps one
/// connection of its own, not one of a pool's, listening on all of them.
///
/// A subscriber is told ``Event/listening(again:)`` each time the channels are listened
/// to: at first, and after a reconnection, when what was notified meanwhile was not heard
/// and the subscriber looks for it itself. Then each notification's payload, in order.
///
/// A lost connection is found by its error, or, when a link is cut and nothing answers, by
/// a `SELECT 1` every ``checkInterval`` that gets no answer within the connect timeout;
/// then the listener connects again every second, and logs it once per loss.
public final class DatabaseListener: Service, Sendable {
    /// What a subscriber is told.
    public enum Event: Sendable, Hashable {
        /// The channels are listened to; `again` after a reconnection.
        case listening(again: Bool)
        /// A notification's payload.
        case notification(String)
    }

    private struct Subscriber {
        let channel: String
        let continuation: AsyncStream<Event>.Continuation
    }

    private let url: DatabaseURL
    private let connectTimeout: Duration
    /// How often a quiet connection is asked whether it still answers.
    public let checkInterval: Duration
    private let subscribers = NIOLockedValueBox<[Subscriber]?>([])
    private let logger: Logger

    public init(url: DatabaseURL, connectTimeout: Duration = .seconds(5), checkInterval: Duration = .seconds(10), logger: Logger) {
        self.url = url
        self.connectTimeout = connectTimeout
        self.checkInterval = checkInterval
        self.logger = logger
    }

    /// The events of `channel`. Subscribe before the service runs; the stream finishes
    /// when it stops.
    public func subscribe(_ channel: String) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        subscribers.withLockedValue { subscribers in
            precondition(subscribers != nil, "subscribe to \(channel) before the listener runs")
            subscribers?.append(Subscriber(channel: channel, continuation: continuation))
        }
        return stream
    }

    /// Listens until the graceful shutdown, connecting again whenever the connection is
    /// lost; then finishes every subscriber's stream.
    public func run() async throws {
        let subscribers = self.subscribers.withLockedValue { subscribers in
            defer { subscribers = nil }
            return subscribers ?? []
        }
        defer { for subscriber in subscribers { subscriber.continuation.finish() } }
        guard !subscribers.isEmpty else {
            try? await gracefulShutdown()
            return
        }
        await cancelWhenGracefulShutdown {
            // Whether the channels were listened to before, and whether the connection is
            // lost (logged once per loss).
            let state = NIOLockedValueBox((listenedBefore: false, lost: false))
            while !Task.isCancelled {
                do {
                    try await DatabaseProbe.withConnection(to: self.url, timeout: self.connectTimeout, logger: self.logger) { connection in
                        try await self.listen(on: connection, subscribers, again: state.withLockedValue { $0.listenedBefore }) {
                            let wasLost = state.withLockedValue { state in
                                defer { state = (true, false) }
                                return state.lost
                            }
                            if wasLost { self.logger.notice("listening for notifications again") }
                        }
                    }
                } catch {
                    if Task.isCancelled { return }
                    let wasLost = state.withLockedValue { state in
                        defer { state.lost = true }
                        return state.lost
                    }
                    if !wasLost {
                        self.logger.warning("LISTEN connection lost; reconnecting", metadata: ["error": "\(String(reflecting: error))"])
                    }
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Listens on every subscriber's channel, tells them, and relays each notification
    /// until the connection fails (or stops answering) or the task is cancelled.
    private func listen(
        on connection: PostgresConnection,
        _ subscribers: [Subscriber],
        again: Bool,
        onListening: () -> Void
    ) async throws {
        let receivers = Dictionary(grouping: subscribers, by: \.channel).mapValues { $0.map(\.continuation) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (channel, continuations) in receivers.sorted(by: { $0.key < $1.key }) {
                let notifications = try await connection.listen(channel)
                group.addTask {
                    for try await notification in notifications {
                        for continuation in continuations { continuation.yield(.notification(notification.payload)) }
                    }
                    throw ListenerError.channelClosed(channel)
                }
            }
            onListening()
            for subscriber in subscribers { subscriber.continuation.yield(.listening(again: again)) }
            let (interval, timeout, logger) = (checkInterval, connectTimeout, self.logger)
            group.addTask {
                while true {
                    try await Task.sleep(for: interval)
                    do {
                        _ = try await abandoning(after: timeout) { try await connection.query("SELECT 1", logger: logger) }
                    } catch is TimedOut {
                        throw ListenerError.noAnswer(timeout)
                    }
                }
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    enum ListenerError: Error, CustomStringConvertible {
        case channelClosed(String)
        case noAnswer(Duration)

        var description: String {
            switch self {
            case .channelClosed(let channel): "the notifications of \(channel) ended"
            case .noAnswer(let timeout): "the connection did not answer within \(timeout)"
            }
        }
    }
}
