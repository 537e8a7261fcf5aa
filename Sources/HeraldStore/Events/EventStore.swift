import Foundation
import HeraldCore
import Logging
import PostgresNIO

/// The store as the event log's readers use it, on ``EventsPool``: the event stream, a
/// copy's timeline, webhooks and their dispatcher, the callback outbox.
public struct EventStore: StoreFacade {
    let core: StoreCore

    init(client: PostgresClient, sealer: CredentialSealer, recentPushes: RecentPushes, msgIDs: MessageIDs, eventApps: EventApps, logger: Logger) {
        core = StoreCore(client: client, sealer: sealer, recentPushes: recentPushes, msgIDs: msgIDs, eventApps: eventApps, logger: logger)
    }

    init(core: StoreCore) {
        self.core = core
    }
}

extension EventStore {
    /// Up to `limit` of the app's events after `cursor`, of `types` (all when empty), in
    /// commit order. Only events of transactions older than every one still open are read:
    /// none can appear behind the returned cursor later (migration 0018). With fewer than
    /// `limit` events, the cursor moves up to that horizon even past no event, so the next
    /// read starts there.
    public func events(appID: Int64, after cursor: EventCursor, types: [DeliveryEventType] = [], limit: Int) async throws -> EventPage {
        let rows = try await client.query(
            """
            WITH horizon AS (SELECT (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint AS xmin)
            SELECT h.xmin, \(unescaped: DeliveryEvent.columns)
            FROM horizon h LEFT JOIN LATERAL (
                SELECT * FROM events e
                WHERE e.app_id = \(appID) AND (e.xid, e.id) > (\(String(cursor.xid))::xid8, \(cursor.id))
                  AND e.xid < \(unescaped: "pg_snapshot_xmin(pg_current_snapshot())")
                  AND (cardinality(\(types.map(\.rawValue))::text[]) = 0 OR e.type = ANY(\(types.map(\.rawValue))::text[]))
                ORDER BY e.xid, e.id LIMIT \(Int64(limit))
            ) e ON true
            """,
            logger: logger
        )
        var events: [DeliveryEvent] = []
        var horizon: Int64 = 0
        for try await row in rows.decode((Int64, Int64?, Int64?, String?, String?, String?, Date?, String?).self) {
            horizon = row.0
            guard let xid = row.1, let id = row.2, let type = row.3, let at = row.6, let data = row.7 else { continue }
            events.append(DeliveryEvent((xid, id, type, row.4, row.5, at, data)))
        }
        var next = events.last?.cursor ?? cursor
        if events.count < limit, horizon > 0 {
            // Everything of this app below the horizon has been read: start there next time.
            next = max(next, EventCursor(xid: horizon - 1, id: .max))
        }
        return EventPage(events: events, cursor: next)
    }
}

extension EventStore {
    /// Which apps record delivery events (shared by the node's facades).
    public var eventApps: EventApps { core.eventApps }
}
