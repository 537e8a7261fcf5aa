import Foundation
import HeraldCore
import PostgresNIO

extension PurgeStore {
    /// Deletes up to `limit` events older than `cutoff`, the oldest first (with failed
    /// callback requests and the callbacks of messages no longer stored); returns how many
    /// events it deleted. The purge task calls it until it deletes fewer than `limit`.
    public func purgeEvents(before cutoff: Date, limit: Int = 10_000) async throws -> Int {
        let rows = try await client.query(
            """
            WITH gone AS (
                DELETE FROM events WHERE id IN (
                    SELECT id FROM events WHERE at < \(cutoff) ORDER BY id LIMIT \(Int64(limit)) FOR UPDATE SKIP LOCKED
                )
                RETURNING id
            ), failed AS (
                DELETE FROM callback_outbox WHERE failed_at < \(cutoff)
            ), orphaned AS (
                DELETE FROM message_callbacks c WHERE c.message_id IN (
                    SELECT c2.message_id FROM message_callbacks c2
                    WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = c2.message_id) LIMIT \(Int64(limit))
                )
            )
            SELECT count(*)::bigint FROM gone
            """,
            logger: logger
        )
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }
}
