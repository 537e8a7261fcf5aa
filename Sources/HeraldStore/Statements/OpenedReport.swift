import Foundation
import HeraldCore
import PostgresNIO

extension StoreFacade {
    /// The device reported it opened (or clicked) a message. The first report of a copy
    /// whose message records events writes an `opened` event (and its callback request),
    /// once the copy's outcome is in the event log: a report that comes before the
    /// acknowledgement or the delivery is recorded (both are written in batches) leaves
    /// its event to the writer of that outcome, which writes it after its own (migration
    /// 0030), so a copy's events read in the order they happened.
    func recordOpened(deviceID: Int64, msgID: String) async throws {
        guard Identifiers.isMsgID(msgID) else { return }
        try await transaction { connection in
            // Waits for a writer of the copy's outcome that holds its row (the acknowledgement
            // batch holds it shared, the center's record updates it): the check below, a
            // statement of its own, then sees what it wrote, and that writer saw no report.
            // Without the wait, each could miss the other and the event be written by neither.
            try await connection.query(
                """
                SELECT 1 FROM deliveries dl JOIN messages m ON m.id = dl.message_id
                WHERE m.msg_id = \(msgID) AND dl.device_id = \(deviceID) FOR UPDATE OF dl
                """,
                logger: logger
            )
            try await connection.query(
                """
                WITH before AS (
                    SELECT dl.message_id, dl.opened_at IS NULL AS first, m.events, m.app_id, m.msg_id
                    FROM deliveries dl JOIN messages m ON m.id = dl.message_id
                    WHERE m.msg_id = \(msgID) AND dl.device_id = \(deviceID)
                ), opened AS (
                    UPDATE deliveries dl SET opened_at = COALESCE(dl.opened_at, now()) FROM before b
                    WHERE dl.message_id = b.message_id AND dl.device_id = \(deviceID)
                    RETURNING dl.message_id
                ), new_events AS (
                    SELECT b.app_id, 'opened' AS type, b.message_id, b.msg_id, d.id AS device_id, d.registration_id, '{}'::jsonb AS data
                    FROM before b JOIN devices d ON d.id = \(deviceID) WHERE b.first AND b.events
                      AND EXISTS (SELECT 1 FROM events e WHERE e.message_id = b.message_id AND e.device_id = \(deviceID)
                                  AND e.type IN \(unescaped: DeliveredCopy.events))
                ), \(unescaped: EventRows.ctes)
                SELECT count(*) FROM opened
                """,
                logger: logger
            )
        }
    }
}
