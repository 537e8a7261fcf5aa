import Foundation
import HeraldCore
import PostgresNIO

/// Pushes spread over time (`big_push_duration`): their audience counted once, and their
/// job parked between batches (migration 0020).
extension CenterStore {
    /// Counts a spread push's audience and records it on its job, which `node` holds.
    /// Returns the count.
    public func startSpread(_ job: PushJob, message: MessageRecord, node: String) async throws -> Int {
        let audience = message.push.audience
        let rows = try await client.query(
            """
            UPDATE push_jobs SET spread_total = (
                SELECT count(*) FROM devices d WHERE d.app_id = \(message.appID) AND \(audienceFilter: audience, appID: message.appID)
            )
            WHERE id = \(job.id) AND leased_by = \(node) RETURNING spread_total
            """,
            logger: logger
        )
        for try await total in rows.decode(Int32.self) { return Int(total) }
        throw HeraldError(.conflict, "job \(job.id) was taken over")
    }

    /// Gives a spread push's job back until its next batch is due: no lease, available at
    /// `due`, its copies so far recorded. The next claim is a first claim again (not a
    /// takeover: everything it fanned out was routed).
    public func parkSpread(_ job: PushJob, done: Int, until due: Date, node: String) async throws {
        try await client.query(
            """
            UPDATE push_jobs SET spread_done = \(Int32(clamping: done)), available_at = \(due),
                leased_until = NULL, leased_by = NULL, attempts = 0
            WHERE id = \(job.id) AND leased_by = \(node)
            """,
            logger: logger
        )
    }

    /// The copies a spread push's job has made, counted again (after a takeover, the
    /// worker that died may have made more than it recorded).
    public func spreadCopies(messageID: Int64) async throws -> Int {
        let rows = try await client.query("SELECT count(*) FROM deliveries WHERE message_id = \(messageID)", logger: logger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }
}
