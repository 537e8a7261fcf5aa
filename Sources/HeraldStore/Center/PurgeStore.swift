import Foundation
import HeraldCore
import PostgresNIO

/// The housekeeping the nodes share (under a cluster task's lease): expired inbox copies,
/// old messages, daily counts and events purged. Reached as
/// ``CenterStore/purge``.
public struct PurgeStore: StoreFacade {
    let core: StoreCore
}

extension CenterStore {
    /// What the purges delete, in bounded batches.
    public var purge: PurgeStore { PurgeStore(core: core) }
}

extension PurgeStore {

    /// Deletes up to `limit` inbox rows whose time to live has passed, the oldest first,
    /// whether their device acknowledged them or not; the copies not acknowledged are
    /// marked expired. What a device that never comes back was sent doesn't stay forever.
    /// Returns how many rows it deleted.
    public func purgeExpiredInbox(now: Date = Date(), limit: Int = 10_000) async throws -> Int {
        let rows = try await client.query(
            """
            WITH gone AS (
                DELETE FROM device_messages WHERE ctid IN (
                    SELECT ctid FROM device_messages WHERE expires_at <= \(now) ORDER BY expires_at
                    LIMIT \(Int64(limit)) FOR UPDATE SKIP LOCKED
                )
                RETURNING device_id, seq
            ), expired AS (
                UPDATE deliveries dl SET state = 'expired', next_attempt_at = NULL FROM gone
                WHERE dl.device_id = gone.device_id AND dl.inbox_seq = gone.seq AND dl.state IN ('pending', 'waiting')
                  AND gone.seq > COALESCE((SELECT a.acked_seq FROM device_acks a WHERE a.device_id = gone.device_id), 0)
            )
            SELECT count(*)::bigint FROM gone
            """,
            logger: logger
        )
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    /// Deletes up to `limit` messages sent before `cutoff` whose fan-out is finished, with
    /// their deliveries (the trigger of migration 0005); returns how many. Messages are
    /// found by their ids, which sort by the time they were made, as text too (19 digits,
    /// time first: ``Identifiers/msgIDFloor(milliseconds:)``; the legacy hex ids begin with
    /// "0" and sort below them all), so the unique index on `msg_id` reaches the oldest
    /// directly; no index on `created_at` is kept for this. `created_at` still decides.
    public func purgeMessages(sentBefore cutoff: Date, limit: Int = 1_000) async throws -> Int {
        let bound = Identifiers.msgIDFloor(milliseconds: UInt64(max(0, cutoff.timeIntervalSince1970 * 1000)))
        let rows = try await client.query(
            """
            WITH gone AS (
                DELETE FROM messages WHERE id IN (
                    SELECT m.id FROM messages m
                    WHERE m.msg_id < \(bound) AND m.created_at < \(cutoff)
                      AND NOT EXISTS (SELECT 1 FROM push_jobs j WHERE j.message_id = m.id)
                    ORDER BY m.msg_id LIMIT \(Int64(limit)) FOR UPDATE SKIP LOCKED
                )
                RETURNING id
            )
            SELECT count(*)::bigint FROM gone
            """,
            logger: logger
        )
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    /// Deletes the daily-cap counts of days over in every zone (two days back: a day ends
    /// at most 26 hours after it began in UTC), up to `limit`; returns how many.
    public func purgeDailyCounts(limit: Int = 10_000) async throws -> Int {
        try await client.query(
            """
            DELETE FROM device_daily_pushes WHERE ctid IN (
                SELECT ctid FROM device_daily_pushes WHERE day < current_date - 2 LIMIT \(Int64(limit)) FOR UPDATE SKIP LOCKED
            ) RETURNING device_id
            """,
            logger: logger
        ).count()
    }
}
