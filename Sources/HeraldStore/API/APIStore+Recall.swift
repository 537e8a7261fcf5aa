import Foundation
import HeraldCore
import PostgresNIO

extension APIStore {
    /// Recalls messages by msg id or by identifier, within `window` of their acceptance.
    ///
    /// In one transaction: the messages are marked recalled, copies not delivered yet are
    /// cancelled (removed from inboxes, never sent later), each device that got one, or may
    /// hold one whose acknowledgement isn't recorded yet, is noted as pending recall of the
    /// identifier, and a recall job is queued per message
    /// to send the commands. Recalling again is harmless. Returns the recalled msg ids.
    public func recall(
        appID: Int64,
        msgIDs: [String] = [],
        identifiers: [String] = [],
        window: TimeInterval,
        now: Date = Date()
    )
        async throws -> [String]
    {
        try await transaction { connection in
            let rows = try await connection.query(
                """
                SELECT id, msg_id, identifier, created_at, recalled_at IS NOT NULL FROM messages
                WHERE app_id = \(appID) AND (msg_id = ANY(\(msgIDs)) OR identifier = ANY(\(identifiers)))
                ORDER BY id FOR UPDATE
                """,
                logger: logger
            )
            var found: [(id: Int64, msgID: String, identifier: String, createdAt: Date, recalled: Bool)] = []
            for try await row in rows.decode((Int64, String, String, Date, Bool).self) {
                found.append((row.0, row.1, row.2, row.3, row.4))
            }
            for msgID in msgIDs where !found.contains(where: { $0.msgID == msgID }) {
                throw HeraldError(.messageNotFound, "msg_id: no message \(msgID) in this app")
            }
            let inWindow = found.filter { now.timeIntervalSince($0.createdAt) <= window }
            if inWindow.count < found.count, !msgIDs.isEmpty || inWindow.isEmpty {
                let hours = Int(window / 3600)
                throw HeraldError(.recallWindowClosed, "recall works within \(hours) h of sending; this message is older")
            }
            if found.isEmpty {
                throw HeraldError(.messageNotFound, "identifiers: no message with these identifiers in this app")
            }
            let fresh = inWindow.filter { !$0.recalled }
            for message in fresh {
                try await connection.query("UPDATE messages SET recalled_at = \(now) WHERE id = \(message.id)", logger: logger)
                try await cancelUndelivered(messageIDs: [message.id], state: "recalled", on: connection)
                try await connection.query(
                    """
                    INSERT INTO device_recalls (device_id, identifier, recalled_at)
                    SELECT dl.device_id, \(message.identifier), \(now) FROM deliveries dl JOIN devices d ON d.id = dl.device_id
                         LEFT JOIN device_acks a ON a.device_id = dl.device_id
                    WHERE dl.message_id = \(message.id)
                      AND (dl.state IN \(unescaped: DeliveredCopy.states) OR (dl.inbox_seq IS NOT NULL AND dl.inbox_seq <= a.acked_seq)
                           -- In the inbox of a device connected since the message was sent: it
                           -- may hold the copy, its acknowledgement not recorded yet (written in
                           -- batches, or lost). A command for a copy it never got removes nothing.
                           OR (dl.inbox_seq IS NOT NULL AND EXISTS (
                                SELECT 1 FROM device_sessions s WHERE s.device_id = dl.device_id
                                  AND (s.node_id IS NOT NULL OR s.last_seen_at >= \(message.createdAt)))))
                    ON CONFLICT (device_id, identifier) DO UPDATE SET recalled_at = EXCLUDED.recalled_at
                    """,
                    logger: logger
                )
                try await connection.query(
                    "INSERT INTO push_jobs (message_id, kind) VALUES (\(message.id), 'recall')",
                    logger: logger
                )
            }
            if !fresh.isEmpty {
                try await recordRecalls(messageIDs: fresh.map(\.id), on: connection)
                try await connection.query("NOTIFY herald_jobs", logger: logger)
            }
            return inWindow.map(\.msgID)
        }
    }
}
