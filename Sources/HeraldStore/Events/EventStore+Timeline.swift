import Foundation
import HeraldCore
import PostgresNIO

/// What happened to one copy (``EventStore/timeline(appID:msgID:registrationID:)``).
public struct CopyTimeline: Sendable {
    /// Where it comes from: the event log (the message's events are recorded), or the
    /// copy's delivery row and its message (fewer steps, some without a time).
    public enum Source: String, Sendable {
        case events
        case deliveries
    }

    public struct Step: Sendable {
        public var type: DeliveryEventType
        /// Nil when the delivery row doesn't say when (source `deliveries`).
        public var at: Date?
        public var data: JSONValue
    }

    public var source: Source
    /// The copy's delivery state (`deliveries.state`); nil when the device got no copy.
    public var state: String?
    public var steps: [Step]
}

/// Why a timeline can't be read.
public enum TimelineLookupFailure: Error, Sendable {
    case messageNotFound
    case deviceNotFound
}

extension EventStore {
    /// The timeline of the copy of the app's message `msgID` for its device
    /// `registrationID`: its events (and the message's own: accepted, recalled) in order,
    /// when the message records them, else what its delivery row holds.
    public func timeline(appID: Int64, msgID: String, registrationID: String) async throws -> Result<CopyTimeline, TimelineLookupFailure> {
        let rows = try await client.query(
            """
            SELECT m.id, m.events, m.created_at, m.recalled_at, d.id, dl.state, dl.inbox_seq, dl.routed_at, dl.opened_at, dl.apns_reason
            FROM messages m
                LEFT JOIN devices d ON d.app_id = m.app_id AND d.registration_id = \(registrationID)
                LEFT JOIN deliveries dl ON dl.message_id = m.id AND dl.device_id = d.id
            WHERE m.app_id = \(appID) AND m.msg_id = \(msgID)
            """,
            logger: logger
        )
        typealias Row = (Int64, Bool, Date, Date?, Int64?, String?, Int64?, Date?, Date?, String?)
        var found: Row?
        for try await row in rows.decode(Row.self) { found = row }
        guard let row = found else { return .failure(.messageNotFound) }
        guard let deviceID = row.4 else { return .failure(.deviceNotFound) }
        let state = row.5
        guard row.1 else {
            return .success(
                Self.timeline(created: row.2, recalled: row.3, state: state, inboxSeq: row.6, routed: row.7, opened: row.8, reason: row.9)
            )
        }
        let events = try await client.query(
            """
            SELECT e.type, e.at, e.data::text FROM events e
            WHERE e.message_id = \(row.0) AND (e.device_id = \(deviceID) OR e.device_id IS NULL)
            ORDER BY e.at, e.id
            """,
            logger: logger
        )
        var steps: [CopyTimeline.Step] = []
        for try await (type, at, data) in events.decode((String, Date, String).self) {
            guard let type = DeliveryEventType(rawValue: type) else { continue }
            let value = (try? JSONDecoder().decode(JSONValue.self, from: Data(data.utf8))) ?? .object([:])
            steps.append(CopyTimeline.Step(type: type, at: at, data: value))
        }
        return .success(CopyTimeline(source: .events, state: state, steps: steps))
    }

    /// A timeline from the delivery row when no events were recorded.
    static func timeline(
        created: Date,
        recalled: Date?,
        state: String?,
        inboxSeq: Int64?,
        routed: Date?,
        opened: Date?,
        reason: String?
    ) -> CopyTimeline {
        var steps = [CopyTimeline.Step(type: .accepted, at: created, data: .object([:]))]
        if let inboxSeq { steps.append(CopyTimeline.Step(type: .stored, at: nil, data: .object(["inbox_seq": .int(inboxSeq)]))) }
        let reasonData: JSONValue = .object(reason.map { ["reason": .string($0)] } ?? [:])
        switch state {
        case "tcp": steps.append(CopyTimeline.Step(type: .acknowledged, at: routed, data: .object(["channel": "mqtt"])))
        case "apns": steps.append(CopyTimeline.Step(type: .sentAPNs, at: routed, data: .object(["channel": "apns"])))
        case "fcm": steps.append(CopyTimeline.Step(type: .sentFCM, at: routed, data: .object(["channel": "fcm"])))
        case "failed": steps.append(CopyTimeline.Step(type: .failed, at: routed, data: reasonData))
        case "expired": steps.append(CopyTimeline.Step(type: .expired, at: routed, data: reasonData))
        default: break
        }
        if let opened { steps.append(CopyTimeline.Step(type: .opened, at: opened, data: .object([:]))) }
        if let recalled { steps.append(CopyTimeline.Step(type: .recalled, at: recalled, data: .object([:]))) }
        return CopyTimeline(source: .deliveries, state: state, steps: steps)
    }
}
