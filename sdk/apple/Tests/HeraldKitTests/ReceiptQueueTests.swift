import Foundation
import Testing

@testable import HeraldKit

/// Receipts survive a lost connection and a relaunch, and leave the queue once sent.
struct ReceiptQueueTests {
    struct Lost: Error {}

    func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("receipts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func aReceiptWhoseSendFailedIsSentOnTheNextFlushAndOnlyOnce() async throws {
        let queue = ReceiptQueue(url: nil)
        try queue.add(Receipt(msgID: "1", kind: .delivered))
        try queue.add(Receipt(msgID: "1", kind: .opened))
        await #expect(throws: Lost.self) { try await queue.flush { _ in throw Lost() } }
        #expect(try queue.pending().count == 2)
        var sent: [Receipt] = []
        #expect(try await queue.flush { sent += $0 } == 2)
        #expect(sent.map(\.kind) == [.delivered, .opened])
        #expect(try await queue.flush { sent += $0 } == 0)
        #expect(sent.count == 2)
    }

    @Test func theExtensionsReceiptsReachTheAppsQueueAndSurviveARelaunch() async throws {
        let folder = try directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("receipts.json")
        // The extension records the delivery; the app, later, a tap on an action.
        try ReceiptQueue(url: url).add(Receipt(msgID: "7", kind: .delivered))
        try ReceiptQueue(url: url).add(Receipt(msgID: "7", kind: .action, action: "see"))
        // The same receipt twice is kept once.
        try ReceiptQueue(url: url).add(Receipt(msgID: "7", kind: .delivered))
        let relaunched = ReceiptQueue(url: url)
        #expect(try relaunched.pending().map(\.kind) == [.delivered, .action])
        var sent: [Receipt] = []
        try await relaunched.flush { sent += $0 }
        #expect(sent.last?.action == "see")
        #expect(try ReceiptQueue(url: url).pending().isEmpty)
    }

    @Test func aReceiptIsSentAsHeraldTakesIt() throws {
        let receipt = Receipt(
            msgID: "42",
            kind: .action,
            action: "see",
            at: Date(timeIntervalSince1970: 1_800_000_000),
            id: UUID(uuidString: "00000000-0000-0000-0000-000000000001")!
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .iso8601
        #expect(
            String(decoding: try encoder.encode(receipt), as: UTF8.self)
                == #"{"action":"see","at":"2027-01-15T08:00:00Z","id":"00000000-0000-0000-0000-000000000001","msg_id":"42","type":"action"}"#
        )
    }

    @Test func receiptsAreSpreadOverTheWindow() {
        var generator = SystemRandomNumberGenerator()
        let delays = (0..<200).map { _ in ReceiptQueue.delay(spread: .seconds(30), using: &generator) }
        #expect(delays.allSatisfy { $0 >= .zero && $0 <= .seconds(30) })
        #expect(Set(delays).count > 100)
    }

    /// The sender: a nudge (a connection came up) sends at once, well inside the spread; a
    /// failed send is tried again later and each receipt reaches Herald once.
    @Test func theSenderSendsAtOnceWhenNudgedAndAgainAfterAFailure() async throws {
        let queue = ReceiptQueue(url: nil)
        let calls = Calls()
        let sender = ReceiptSender(
            queue: queue,
            spread: .seconds(3600),
            backoff: Backoff(base: .milliseconds(50), cap: .milliseconds(100)),
            logger: .init(label: "test")
        ) { batch in
            try await calls.take(batch)
        }
        let running = Task { await sender.run() }
        defer { running.cancel() }
        try queue.add(Receipt(msgID: "1", kind: .displayed))
        sender.nudge()
        try await calls.wait(for: 2)
        running.cancel()
        #expect(await calls.sent.map(\.msgID) == ["1"])
        #expect(try queue.pending().isEmpty)
    }

    /// Herald as the sender sees it: the first call fails, the next ones take what they get.
    actor Calls {
        var count = 0
        var sent: [Receipt] = []

        func take(_ batch: [Receipt]) throws {
            count += 1
            if count == 1 { throw Lost() }
            sent += batch
        }

        func wait(for calls: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while count < calls {
                guard ContinuousClock.now < deadline else { throw Lost() }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}
