import HeapModule
import NIOCore

/// The acknowledgement deadlines of one event loop's deliveries, on one timer armed for
/// the earliest.
///
/// A timer per delivery made every acknowledgement cost time in proportion to the
/// deliveries in flight: NIO cancels a scheduled task by searching the loop's list of
/// them. Here a deadline is never cancelled: when it comes due, the connection is asked
/// whether that delivery still waits. Deadlines of settled deliveries are dropped in bulk
/// once they outnumber the rest.
final class AckDeadlines {
    private struct Entry: Comparable {
        var deadline: NIODeadline
        var ticket: UInt64
        var handler: MQTTConnectionHandler
        var key: DeliveryKey

        static func < (lhs: Entry, rhs: Entry) -> Bool { lhs.deadline < rhs.deadline }
        static func == (lhs: Entry, rhs: Entry) -> Bool { lhs.ticket == rhs.ticket }
    }

    private let eventLoop: any EventLoop
    private var heap = Heap<Entry>()
    private var lastTicket: UInt64 = 0
    private var timer: Scheduled<Void>?
    private var armedFor: NIODeadline?
    /// Compact when the heap grows past this (twice its size after the last compaction).
    private var compactAt = 4096

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Adds a deadline for the delivery `key` on `handler`; the returned ticket tells this
    /// wait from a later one for the same key.
    func add(_ deadline: NIODeadline, for handler: MQTTConnectionHandler, key: DeliveryKey) -> UInt64 {
        lastTicket &+= 1
        heap.insert(Entry(deadline: deadline, ticket: lastTicket, handler: handler, key: key))
        if heap.count >= compactAt { compact() }
        arm()
        return lastTicket
    }

    private func fire() {
        timer = nil
        armedFor = nil
        let now = NIODeadline.now()
        while let first = heap.min, first.deadline <= now {
            let entry = heap.removeMin()
            entry.handler.ackDeadlinePassed(entry.key, ticket: entry.ticket)
        }
        arm()
    }

    private func arm() {
        guard let first = heap.min else { return }
        if let armedFor, armedFor <= first.deadline { return }
        timer?.cancel()
        armedFor = first.deadline
        timer = eventLoop.assumeIsolated().scheduleTask(deadline: first.deadline) { self.fire() }
    }

    private func compact() {
        heap = Heap(heap.unordered.filter { $0.handler.awaitsAcknowledgement(of: $0.key, ticket: $0.ticket) })
        compactAt = max(4096, heap.count * 2)
    }
}
