import Foundation
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

/// A local webhook endpoint for the benchmark: answers every POST 200 at once and counts
/// the events its bodies carry (`{"events": [...]}`), with when the first and the last
/// arrived, so a run can say how many callback deliveries a second Herald made.
final class WebhookReceiver: Sendable {
    struct Tally: Sendable {
        var requests = 0
        var events = 0
        var first: ContinuousClock.Instant?
        var last: ContinuousClock.Instant?

        /// Events a second from the first request to the last.
        var perSecond: Double {
            guard let first, let last, events > 1 else { return 0 }
            let span = first.duration(to: last).components
            let seconds = Double(span.seconds) + Double(span.attoseconds) / 1e18
            return seconds > 0 ? Double(events) / seconds : 0
        }
    }

    private let tally: NIOLockedValueBox<Tally>
    let port: Int
    private let task: Task<Void, any Error>

    private init(port: Int, tally: NIOLockedValueBox<Tally>, task: Task<Void, any Error>) {
        self.port = port
        self.tally = tally
        self.task = task
    }

    static func start() async throws -> WebhookReceiver {
        let tally = NIOLockedValueBox(Tally())
        let router = Router()
        router.post("/hook") { request, _ -> HTTPResponse.Status in
            let body = try await request.body.collect(upTo: 16 << 20)
            let count = Self.eventCount(body)
            let now = ContinuousClock.now
            tally.withLockedValue { tally in
                tally.requests += 1
                tally.events += count
                if tally.first == nil { tally.first = now }
                tally.last = now
            }
            return .ok
        }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "herald-bench-receiver"),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: {
                var logger = Logger(label: "herald-bench.webhook-receiver")
                logger.logLevel = .critical  // its shutdown by cancellation is expected
                return logger
            }()
        )
        let task = Task { try await app.runService(gracefulShutdownSignals: []) }
        guard let port = await ports.first(where: { _ in true }), port > 0 else { throw BenchError("the webhook receiver did not start") }
        return WebhookReceiver(port: port, tally: tally, task: task)
    }

    var current: Tally { tally.withLockedValue { $0 } }

    func reset() { tally.withLockedValue { $0 = Tally() } }

    /// Waits until no event has arrived for `quiet`, at most `timeout`; returns the tally.
    func settle(quiet: Duration = .seconds(2), timeout: Duration) async throws -> Tally {
        let deadline = ContinuousClock.now + timeout
        var seen = current.events
        var stillSince = ContinuousClock.now
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            let now = current.events
            if now != seen {
                seen = now
                stillSince = .now
            } else if stillSince.duration(to: .now) >= quiet {
                break
            }
        }
        return current
    }

    func stop() { task.cancel() }

    /// The length of the body's `events` array.
    static func eventCount(_ body: ByteBuffer) -> Int {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
            let events = object["events"] as? [Any]
        else { return 0 }
        return events.count
    }
}
