import HeapModule
import NIOCore

/// Deadlines, each with an element and a ticket, taken earliest first once due.
///
/// A value type without a clock: the caller passes the time, so tests drive it with
/// made-up instants. A deadline is never cancelled here: its owner keeps the ticket and,
/// when it comes due, decides whether it still matters (see ``AckDeadlines``).
struct DeadlineQueue<Element> {
    private struct Entry: Comparable {
        var deadline: NIODeadline
        var ticket: UInt64
        var element: Element

        static func < (lhs: Entry, rhs: Entry) -> Bool { lhs.deadline < rhs.deadline }
        static func == (lhs: Entry, rhs: Entry) -> Bool { lhs.ticket == rhs.ticket }
    }

    private var heap = Heap<Entry>()
    private var lastTicket: UInt64 = 0

    /// Deadlines waiting, due or not.
    var count: Int { heap.count }

    /// The earliest deadline waiting.
    var earliest: NIODeadline? { heap.min?.deadline }

    /// Adds `deadline` for `element`; the returned ticket tells it from every other.
    mutating func add(_ deadline: NIODeadline, _ element: Element) -> UInt64 {
        lastTicket &+= 1
        heap.insert(Entry(deadline: deadline, ticket: lastTicket, element: element))
        return lastTicket
    }

    /// Removes and returns the earliest deadline's element if it is due at `now` (its
    /// deadline is `now` or before); nil when none is.
    mutating func popDue(at now: NIODeadline) -> (ticket: UInt64, element: Element)? {
        guard let first = heap.min, first.deadline <= now else { return nil }
        let entry = heap.removeMin()
        return (entry.ticket, entry.element)
    }

    /// Keeps only the deadlines `isIncluded` accepts (their order is kept).
    mutating func filter(_ isIncluded: (_ ticket: UInt64, _ element: Element) -> Bool) {
        heap = Heap(heap.unordered.filter { isIncluded($0.ticket, $0.element) })
    }
}
