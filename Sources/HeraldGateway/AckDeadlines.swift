import NIOCore

/// The acknowledgement deadlines of one event loop's deliveries, on one timer armed for
/// the earliest.
///
/// A timer per delivery made every acknowledgement cost time in proportion to the
/// deliveries in flight: NIO cancels a scheduled task by searching the loop's list of
/// them. Here a deadline is never cancelled: when it comes due, the connection is asked
/// whether that delivery still waits (``AckWaits``). Deadlines of settled deliveries are
/// dropped in bulk once they outnumber the rest. The order and the tickets are
/// ``DeadlineQueue``'s; this class holds the timer, which passes the time in.
final class AckDeadlines {
    private let eventLoop: any EventLoop
    private var queue = DeadlineQueue<(handler: MQTTConnectionHandler, key: DeliveryKey)>()
    private var timer: Scheduled<Void>?
    private var armedFor: NIODeadline?
    /// Compact when the queue grows past this (twice its size after the last compaction).
    private var compactAt = 4096

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Adds a deadline for the delivery `key` on `handler`; the returned ticket tells this
    /// wait from a later one for the same key.
    func add(_ deadline: NIODeadline, for handler: MQTTConnectionHandler, key: DeliveryKey) -> UInt64 {
        let ticket = queue.add(deadline, (handler, key))
        if queue.count >= compactAt { compact() }
        arm()
        return ticket
    }

    /// Tells the connections of the deadlines due at `now`, earliest first, that they
    /// passed, then arms the timer for the next.
    func expire(at now: NIODeadline) {
        while let due = queue.popDue(at: now) {
            due.element.handler.ackDeadlinePassed(due.element.key, ticket: due.ticket)
        }
        arm()
    }

    private func fire() {
        timer = nil
        armedFor = nil
        expire(at: .now())
    }

    private func arm() {
        guard let earliest = queue.earliest else { return }
        if let armedFor, armedFor <= earliest { return }
        timer?.cancel()
        armedFor = earliest
        timer = eventLoop.assumeIsolated().scheduleTask(deadline: earliest) { self.fire() }
    }

    private func compact() {
        queue.filter { ticket, element in element.handler.awaitsAcknowledgement(of: element.key, ticket: ticket) }
        compactAt = max(4096, queue.count * 2)
    }
}
