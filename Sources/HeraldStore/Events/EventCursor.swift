/// A position in the event log: the transaction id and the row id of the last event read
/// (see migration 0018 for why both). Shown to clients as opaque text, `<xid>-<id>`.
public struct EventCursor: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var xid: Int64
    public var id: Int64

    /// Before every event.
    public static let start = EventCursor(xid: 0, id: 0)

    public init(xid: Int64, id: Int64) {
        self.xid = xid
        self.id = id
    }

    /// Reads a cursor the API handed out; nil when `text` isn't one.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let xid = Int64(parts[0]), let id = Int64(parts[1]), xid >= 0, id >= 0 else { return nil }
        self.init(xid: xid, id: id)
    }

    public var description: String { "\(xid)-\(id)" }

    public static func < (lhs: EventCursor, rhs: EventCursor) -> Bool {
        (lhs.xid, lhs.id) < (rhs.xid, rhs.id)
    }
}
