import Foundation
import HeraldCore
import NIOCore
import PostgresNIO

extension CenterStore {
    /// Fans out fresh jobs whose audiences are explicit lists (``PushPath/fansOutExplicitly``)
    /// in one statement: the audiences are resolved, the copies are numbered and stored
    /// (``InboxCopies``; several copies for one device in job order), delivery rows are
    /// written and the jobs'
    /// cursors moved past the end. A message recalled or replaced meanwhile is skipped
    /// (its row is read FOR SHARE, so a recall either waits for this statement and then
    /// cancels what it wrote, or commits first and is seen here).
    ///
    /// Returns each job's targets by job id; nil for a job whose message isn't live.
    public func fanOutExplicit(
        _ jobs: [FanOutWork]
    ) async throws -> [Int64: [FanOutTarget]?] {
        guard !jobs.isEmpty else { return [:] }
        var wanted = ExplicitAudienceRows()
        for work in jobs {
            wanted.append(key: work.job.id, registrationIDs: work.message.push.audience.registrationIDs, aliases: work.message.push.audience.aliases)
        }
        let jobIDs = jobs.map(\.job.id)
        let messageIDs = jobs.map(\.message.id)
        let appIDs = jobs.map(\.message.appID)
        let stored = jobs.map { $0.payload != nil }
        let payloads = jobs.map { ByteBuffer(bytes: $0.payload?.standard ?? []) }
        let androidPayloads = jobs.map { ByteBuffer(bytes: $0.payload?.android ?? []) }
        // Comma-separated ("" for all): an array of arrays would have to be rectangular.
        let platforms = jobs.map { $0.message.push.audience.platforms?.joined(separator: ",") ?? "" }
        let msgIDs = jobs.map(\.message.msgID)
        let expiries = jobs.map(\.message.expiresAt)
        return try await retryingDeadlocks {
            let rows = try await client.query(
                """
                WITH jobs AS (
                    SELECT * FROM unnest(\(jobIDs)::bigint[], \(messageIDs)::bigint[], \(appIDs)::bigint[], \(stored)::boolean[],
                                         \(payloads)::bytea[], \(androidPayloads)::bytea[], \(msgIDs)::text[], \(expiries)::timestamptz[],
                                         \(platforms)::text[])
                        AS j(job_id, message_id, app_id, stored, payload, android_payload, msg_id, expires_at, platforms)
                ), live AS (
                    SELECT m.id FROM messages m
                    WHERE m.id = ANY(\(messageIDs)) AND m.recalled_at IS NULL AND m.superseded_at IS NULL
                    FOR SHARE
                ), wanted AS (
                    SELECT job_id, NULLIF(rid, '') AS rid, NULLIF(alias, '') AS alias
                    FROM unnest(\(wanted.keys)::bigint[], \(wanted.registrationIDs)::text[], \(wanted.aliases)::text[]) AS w(job_id, rid, alias)
                ), targets AS (
                    SELECT j.job_id, d.id AS device_id, j.stored
                    FROM wanted w JOIN jobs j ON j.job_id = w.job_id JOIN live ON live.id = j.message_id
                    JOIN devices d ON d.app_id = j.app_id AND d.registration_id = w.rid
                    WHERE j.platforms = '' OR d.platform = ANY(string_to_array(j.platforms, ','))
                    UNION
                    SELECT j.job_id, d.id, j.stored
                    FROM wanted w JOIN jobs j ON j.job_id = w.job_id JOIN live ON live.id = j.message_id
                    JOIN devices d ON d.app_id = j.app_id AND d.alias = w.alias
                    WHERE j.platforms = '' OR d.platform = ANY(string_to_array(j.platforms, ','))
                ), copies AS (
                    SELECT job_id AS k, device_id, stored FROM targets
                ), contents AS (
                    SELECT job_id AS k, msg_id, payload, android_payload, expires_at FROM jobs WHERE stored
                ), \(unescaped: InboxCopies.ctes), delivered AS (
                    INSERT INTO deliveries (message_id, device_id, inbox_seq)
                    SELECT j.message_id, n.device_id, n.seq FROM numbered n JOIN jobs j ON j.job_id = n.k
                    ON CONFLICT DO NOTHING
                ), advanced AS (
                    UPDATE push_jobs SET cursor_device = \(Int64.max) WHERE id = ANY(\(jobIDs))
                )
                SELECT j.job_id, live.id IS NOT NULL, \(unescaped: FanOutTarget.columns), n.seq, NULL::integer
                FROM jobs j LEFT JOIN live ON live.id = j.message_id
                     LEFT JOIN numbered n ON n.k = j.job_id LEFT JOIN devices d ON d.id = n.device_id
                ORDER BY j.job_id, d.id
                """,
                logger: logger
            )
            var batches: [Int64: [FanOutTarget]?] = [:]
            for try await row in rows {
                let cells = row.makeRandomAccess()
                let jobID = try cells[0].decode(Int64.self)
                guard try cells[1].decode(Bool.self) else {
                    batches[jobID] = .some(nil)
                    continue
                }
                var targets = (batches[jobID] ?? []) ?? []
                if let target = try FanOutTarget(cells, at: 2) { targets.append(target) }
                batches[jobID] = .some(targets)
            }
            return batches
        }
    }
}
