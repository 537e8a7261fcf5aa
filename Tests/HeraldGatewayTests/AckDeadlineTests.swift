import NIOCore
import Testing

@testable import HeraldGateway

/// Acknowledgement deadlines and the waits they end, as a connection and its loop's
/// ``AckDeadlines`` drive them, with made-up instants: no socket, no timer, no sleep.
@Suite struct AckDeadlineTests {
    private let start = NIODeadline.uptimeNanoseconds(1_000_000_000_000)

    @Test func deadlinesComeDueEarliestFirstAndNoneBeforeItsTime() {
        var queue = DeadlineQueue<String>()
        let tickets = [queue.add(start + .seconds(3), "c"), queue.add(start + .seconds(1), "a"), queue.add(start + .seconds(2), "b")]
        #expect(Set(tickets).count == 3)
        #expect(queue.earliest == start + .seconds(1))
        #expect(queue.popDue(at: start + .milliseconds(999))?.element == nil)
        #expect(Self.due(&queue, at: start + .seconds(2)) == ["a", "b"])
        // Due exactly at its deadline.
        #expect(Self.due(&queue, at: start + .seconds(3)) == ["c"])
        #expect(queue.count == 0 && queue.earliest == nil)
    }

    @Test func anAcknowledgedDeliveryNeverTimesOut() {
        var queue = DeadlineQueue<DeliveryKey>()
        var waits = AckWaits<String>()
        for (seq, seconds) in [(1, 3), (2, 1), (3, 2)] {
            let ticket = queue.add(start + .seconds(Int64(seconds)), .seq(Int64(seq)))
            #expect(waits.wait(for: .seq(Int64(seq)), "sender of \(seq)", ticket: ticket) == nil)
        }
        #expect(waits.acknowledged(.seq(3)) == "sender of 3")
        var timedOut: [String] = []
        while let due = queue.popDue(at: start + .seconds(10)) {
            if let receiver = waits.deadlinePassed(due.element, ticket: due.ticket) { timedOut.append(receiver) }
        }
        #expect(timedOut == ["sender of 2", "sender of 1"])
        #expect(waits.count == 0)
    }

    /// A second wait for the same delivery replaces the first (whose sender hears "no
    /// acknowledgement" then): the first's deadline doesn't end the second.
    @Test func aDeadlineEndsOnlyTheWaitItWasSetFor() {
        var queue = DeadlineQueue<DeliveryKey>()
        var waits = AckWaits<String>()
        let first = queue.add(start + .seconds(1), .token(7))
        #expect(waits.wait(for: .token(7), "first", ticket: first) == nil)
        let second = queue.add(start + .seconds(5), .token(7))
        #expect(waits.wait(for: .token(7), "second", ticket: second) == "first")
        #expect(waits.deadlinePassed(.token(7), ticket: first) == nil)
        #expect(!waits.awaits(.token(7), ticket: first) && waits.awaits(.token(7), ticket: second))
        #expect(waits.deadlinePassed(.token(7), ticket: second) == "second")
    }

    /// What ``AckDeadlines`` does once settled deliveries' deadlines outnumber the rest.
    @Test func droppingSettledDeadlinesKeepsTheRestInOrder() {
        var queue = DeadlineQueue<Int>()
        for number in 1...10 { _ = queue.add(start + .seconds(Int64(11 - number)), number) }
        queue.filter { _, number in number.isMultiple(of: 2) }
        #expect(queue.count == 5)
        #expect(Self.due(&queue, at: start + .seconds(20)) == [10, 8, 6, 4, 2])
    }

    @Test func aClosedConnectionEndsEveryWaitAndLaterDeadlinesNone() {
        var queue = DeadlineQueue<DeliveryKey>()
        var waits = AckWaits<String>()
        for seq in 1...3 {
            _ = waits.wait(for: .seq(Int64(seq)), "sender of \(seq)", ticket: queue.add(start + .seconds(1), .seq(Int64(seq))))
        }
        #expect(waits.removeAll().sorted() == ["sender of 1", "sender of 2", "sender of 3"])
        while let due = queue.popDue(at: start + .seconds(1)) {
            #expect(waits.deadlinePassed(due.element, ticket: due.ticket) == nil)
        }
    }

    /// The elements of the deadlines due at `now`, in the order they come out.
    private static func due<Element>(_ queue: inout DeadlineQueue<Element>, at now: NIODeadline) -> [Element] {
        var elements: [Element] = []
        while let due = queue.popDue(at: now) { elements.append(due.element) }
        return elements
    }
}
