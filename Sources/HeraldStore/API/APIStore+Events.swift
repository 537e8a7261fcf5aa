import Foundation
import HeraldCore
import PostgresNIO

extension APIStore {
    /// The event log's readers over this store's pool (when the node has no ``EventsPool``).
    public var eventLog: EventStore { EventStore(core: core) }

    /// Records a push's acceptance, and stores its callback, in the transaction that
    /// accepts it (``acceptPush(_:push:appID:now:appRecordsEvents:)``).
    func recordAcceptance(messageID: Int64, msgID: String, appID: Int64, callback: PushCallback?, on connection: PostgresConnection) async throws {
        try await connection.query(
            "INSERT INTO events (app_id, type, message_id, msg_id) VALUES (\(appID), 'accepted', \(messageID), \(msgID))",
            logger: logger
        )
        guard let callback else { return }
        try await connection.query(
            """
            INSERT INTO message_callbacks (message_id, app_id, url, params, type)
            SELECT \(messageID), \(appID), c.url, c.params, c.type
            FROM json_to_record(\(callback.storedJSON)::json) AS c(url text, params json, type integer)
            """,
            logger: logger
        )
    }

    /// Records that messages were recalled (for those whose events are recorded), in the
    /// recall's transaction.
    func recordRecalls(messageIDs: [Int64], on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            INSERT INTO events (app_id, type, message_id, msg_id)
            SELECT app_id, 'recalled', id, msg_id FROM messages WHERE id = ANY(\(messageIDs)) AND events ORDER BY id
            """,
            logger: logger
        )
    }

    /// Whether the app records every delivery event (its own setting; a webhook also makes
    /// it record them). Nil when there is no such app.
    public func eventsEnabled(appKey: String) async throws -> (enabled: Bool, webhooks: Int)? {
        guard Identifiers.isAppKey(appKey) else { return nil }
        let rows = try await client.query(
            """
            SELECT a.events_enabled, (SELECT count(*) FROM webhooks w WHERE w.app_id = a.id)
            FROM apps a WHERE a.app_key = \(appKey)
            """,
            logger: logger
        )
        for try await (enabled, webhooks) in rows.decode((Bool, Int64).self) { return (enabled, Int(webhooks)) }
        return nil
    }

    /// Turns the app's event recording on or off. False when there is no such app.
    public func setEventsEnabled(appKey: String, _ enabled: Bool) async throws -> Bool {
        guard Identifiers.isAppKey(appKey) else { return false }
        let changed = try await client.query(
            "UPDATE apps SET events_enabled = \(enabled) WHERE app_key = \(appKey) RETURNING id",
            logger: logger
        ).count()
        eventApps.invalidate()
        return changed == 1
    }
}
