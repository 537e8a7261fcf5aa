import HeraldCore
import HeraldTestSupport
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import Testing

@testable import HeraldStore

/// Which apps record events (`EventApps`), cached per process: a change on this node counts
/// from the next lookup, even while a read that began before the change is under way (the
/// first push after a webhook is added records its events: a fresh clone's
/// `WebhookFaultTests.aHungReceiverHoldsNoOtherEndpoint` lost that push's webhooks).
@Suite struct EventAppsTests {
    /// Reads that answer in turn what the test gives them, each when the test says.
    final class Reads: Sendable {
        let answers = NIOLockedValueBox<[(EventApps.Snapshot, AsyncStream<Void>)]>([])
        let count = NIOLockedValueBox(0)

        func add(_ snapshot: EventApps.Snapshot) -> AsyncStream<Void>.Continuation {
            let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
            answers.withLockedValue { $0.append((snapshot, stream)) }
            return continuation
        }

        func read() async throws -> EventApps.Snapshot {
            let (snapshot, gate) = answers.withLockedValue { $0.removeFirst() }
            count.withLockedValue { $0 += 1 }
            for await _ in gate { break }
            return snapshot
        }
    }

    @Test func aReadBegunBeforeAnInvalidationIsNotUsedAfterIt() async throws {
        let client = PostgresClient(configuration: .init(host: "127.0.0.1", port: 1, username: "x", password: nil, database: nil, tls: .disable))
        let reads = Reads()
        let apps = EventApps(client: client, lifetime: .seconds(3600), logger: Logger(label: "test"), reader: { try await reads.read() })
        var recording = EventApps.Snapshot()
        recording.all = [7]

        reads.add(EventApps.Snapshot()).yield()
        #expect(await apps.recordsAll(7) == false)
        // A read begins (the sets were found old, say) and reads what was before the change.
        apps.invalidate()
        let early = reads.add(EventApps.Snapshot())
        let earlyLookup = Task { await apps.recordsAll(7) }
        while reads.count.withLockedValue({ $0 }) < 2 { try await Task.sleep(for: .milliseconds(10)) }
        // The change (a webhook added) and its invalidation, while that read is under way:
        // the next lookup reads again and sees it.
        apps.invalidate()
        reads.add(recording).yield()
        #expect(await apps.recordsAll(7))
        // The early read ends: its older sets replace nothing.
        early.yield()
        #expect(await earlyLookup.value == false)
        #expect(await apps.recordsAll(7))
        #expect(reads.count.withLockedValue { $0 } == 3)
    }
}
