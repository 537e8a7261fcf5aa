/// The device's reports on their way to Herald, without I/O: those waiting for a
/// connection, and those written (QoS 1) that Herald hasn't acknowledged yet.
///
/// A report is kept until its PUBACK arrives. When a connection ends, the unacknowledged
/// reports go back to the front of the queue, so the next connection sends them again,
/// in the order they were made, before anything newer (marked DUP, with their packet
/// ids). Herald records each report idempotently, so a report that did arrive before
/// the connection ended and is sent again changes nothing.
struct ReportQueue {
    /// A report with the packet id it was (or will be) published with.
    struct Numbered {
        var packetID: UInt16
        var report: HeraldClient.Report
        /// Sent before, on an earlier connection.
        var again: Bool
    }

    private(set) var waiting: [Numbered] = []
    private(set) var unacknowledged: [Numbered] = []
    private var nextPacketID: UInt16 = 1

    /// Queues a report made while no connection can take it.
    mutating func wait(_ report: HeraldClient.Report) {
        waiting.append(Numbered(packetID: takePacketID(), report: report, again: false))
    }

    /// Numbers a report written at once; it counts as unacknowledged from now on.
    mutating func send(_ report: HeraldClient.Report) -> Numbered {
        let numbered = Numbered(packetID: takePacketID(), report: report, again: false)
        unacknowledged.append(numbered)
        return numbered
    }

    /// The waiting reports, to write now on a new connection, in order; they count as
    /// unacknowledged from now on.
    mutating func takeWaiting() -> [Numbered] {
        defer {
            unacknowledged += waiting
            waiting = []
        }
        return waiting
    }

    /// Herald acknowledged the report with this packet id.
    mutating func acknowledged(_ packetID: UInt16) {
        if let index = unacknowledged.firstIndex(where: { $0.packetID == packetID }) {
            unacknowledged.remove(at: index)
        }
    }

    /// The connection ended: what it didn't get acknowledged waits again, first.
    mutating func disconnected() {
        waiting = unacknowledged.map { Numbered(packetID: $0.packetID, report: $0.report, again: true) } + waiting
        unacknowledged = []
    }

    private mutating func takePacketID() -> UInt16 {
        defer { nextPacketID = nextPacketID == .max ? 1 : nextPacketID + 1 }
        return nextPacketID
    }
}
