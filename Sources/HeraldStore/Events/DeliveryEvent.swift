import Foundation
import HeraldCore

/// One row of the event log, as readers get it.
public struct DeliveryEvent: Sendable, Hashable {
    /// The position after this event: a reader resumes here.
    public var cursor: EventCursor
    public var id: Int64
    public var type: DeliveryEventType
    public var msgID: String?
    public var registrationID: String?
    public var at: Date
    /// What the event adds (an apns-id and status, a reason, an inbox seq, a channel).
    public var data: JSONValue

    /// The columns ``init(_:at:)`` reads, in order.
    static let columns = "(e.xid::text)::bigint, e.id, e.type, e.msg_id, e.registration_id, e.at, e.data::text"

    init(_ row: (Int64, Int64, String, String?, String?, Date, String)) {
        cursor = EventCursor(xid: row.0, id: row.1)
        id = row.1
        // The log holds only types Herald writes; an unknown one (a newer node's) reads as
        // the closest there is rather than failing the whole read.
        type = DeliveryEventType(rawValue: row.2) ?? .failed
        msgID = row.3
        registrationID = row.4
        at = row.5
        data = (try? JSONDecoder().decode(JSONValue.self, from: Data(row.6.utf8))) ?? .object([:])
    }

    static let rowType = (Int64, Int64, String, String?, String?, Date, String).self
}

/// A page of the event log (``EventStore/events(appID:after:types:limit:)``).
public struct EventPage: Sendable {
    public var events: [DeliveryEvent]
    /// Where to read next: past these events, and past every event of other types (or
    /// none) that committed before the oldest transaction still open.
    public var cursor: EventCursor
}

extension DeliveryEvent {
    /// The event as the stream and webhooks send it: `{"id", "cursor", "type", "msg_id",
    /// "registration_id", "at", "data"}` (`at` in UTC with milliseconds).
    public var json: [UInt8] {
        var writer = JSONObjectWriter(capacity: 256)
        writer.field("id", Int(id))
        writer.field("cursor", cursor.description)
        writer.field("type", type.rawValue)
        writer.field("msg_id", msgID)
        writer.field("registration_id", registrationID)
        writer.field("at", Self.timestamp(at))
        writer.field("data", data)
        return writer.finish()
    }

    /// `{"events": [...]}`: a webhook request's body.
    public static func batchBody(_ events: [DeliveryEvent]) -> [UInt8] {
        var body = Array(#"{"events":["#.utf8)
        for (index, event) in events.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body += event.json
        }
        body += Array("]}".utf8)
        return body
    }

    /// An instant as the events show it: ISO 8601 in UTC with milliseconds.
    public static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: true).timeSeparator(.colon))
    }
}
