import Testing

@testable import HeraldKit

/// The SDK's reports until Herald acknowledges them: in order, sent again after a lost
/// connection, never again once acknowledged.
@Suite struct ReportQueueTests {
    @Test func unacknowledgedReportsWaitAgainBeforeNewerOnesWithTheirPacketIDs() {
        var queue = ReportQueue()
        queue.wait(.foreground)
        let taken = queue.takeWaiting()
        #expect(taken.map(\.report) == [.foreground])
        #expect(queue.waiting.isEmpty)
        let opened = queue.send(.opened(messageID: "m1"))
        let clicked = queue.send(.clicked(messageID: "m1"))
        #expect(Set([taken[0].packetID, opened.packetID, clicked.packetID]).count == 3)

        queue.acknowledged(taken[0].packetID)
        queue.acknowledged(clicked.packetID)
        queue.acknowledged(9_999)  // unknown: ignored
        #expect(queue.unacknowledged.map(\.report) == [.opened(messageID: "m1")])

        // Made while the connection is gone, after the lost one.
        queue.disconnected()
        queue.wait(.background)
        let again = queue.takeWaiting()
        #expect(again.map(\.report) == [.opened(messageID: "m1"), .background])
        #expect(again.map(\.again) == [true, false])
        #expect(again[0].packetID == opened.packetID)
        #expect(queue.unacknowledged.count == 2)
    }

    @Test func packetIDsSkipZeroWhenTheyWrap() {
        var queue = ReportQueue()
        var seen: [UInt16] = []
        for _ in 0...Int(UInt16.max) { seen.append(queue.send(.foreground).packetID) }
        #expect(!seen.contains(0))
        #expect(seen.first == 1 && seen.last == 1)
    }
}
