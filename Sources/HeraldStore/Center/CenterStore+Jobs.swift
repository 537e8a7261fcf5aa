import Foundation
import HeraldCore
import PostgresNIO

/// The center's work in batches: many small jobs claimed, fanned out, recorded and
/// finished with one statement (or one transaction) each, so a commit is shared by every
/// job of the batch instead of paid per push.
extension CenterStore {
    /// Claims up to `limit` of the oldest available jobs whose lease is free, leasing
    /// them to `node` for `lease`.
    public func claimJobs(node: String, lease: Duration, limit: Int) async throws -> [PushJob] {
        let rows = try await client.query(
            """
            UPDATE push_jobs SET leased_until = now() + make_interval(secs => \(lease.timeInterval)), leased_by = \(node),
                attempts = attempts + 1
            WHERE id IN (
                SELECT id FROM push_jobs WHERE available_at <= now() AND (leased_until IS NULL OR leased_until < now())
                ORDER BY available_at, id LIMIT \(Int64(max(1, limit))) FOR UPDATE SKIP LOCKED
            )
            RETURNING id, message_id, kind, cursor_device, attempts, spread_total, spread_done
            """,
            logger: logger
        )
        var jobs: [PushJob] = []
        for try await (id, messageID, kind, cursor, attempts, total, done) in rows.decode(
            (Int64, Int64, String, Int64, Int32, Int32?, Int32).self
        ) {
            jobs.append(
                PushJob(
                    id: id,
                    messageID: messageID,
                    kind: PushJob.Kind(rawValue: kind) ?? .push,
                    cursor: cursor,
                    attempt: Int(attempts),
                    spreadTotal: total.map(Int.init),
                    spreadDone: Int(done)
                )
            )
        }
        return jobs.sorted { $0.id < $1.id }
    }

    /// The messages with these ids (those still there), by id.
    public func messages(ids: [Int64]) async throws -> [Int64: MessageRecord] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await client.query(
            "SELECT \(unescaped: MessageRecord.columns) FROM messages m WHERE m.id = ANY(\(ids))",
            logger: logger
        )
        var messages: [Int64: MessageRecord] = [:]
        for try await row in rows {
            if let message = try MessageRecord(row.makeRandomAccess(), at: 0, recentPushes: recentPushes) { messages[message.id] = message }
        }
        return messages
    }

    /// Records the outcomes of the routed copies of several messages and finishes `jobs`
    /// (removes them, marks their push messages fanned out), in one statement (see
    /// ``recordDeliveries(messageID:_:)``). A copy already moved on (recalled, replaced,
    /// delivered) keeps its state.
    ///
    /// The statement is a function (migration 0008): PostgreSQL plans it once per
    /// connection, and only with index scans, however small the tables were then.
    ///
    /// `routes`: rows of `node_routes` whose copies these are, deleted by the same statement.
    public func recordDeliveries(
        _ batches: [(messageID: Int64, updates: [DeliveryUpdate])],
        finishing jobs: [PushJob] = [],
        routes: [Int64] = []
    ) async throws {
        let rows = batches.flatMap { batch in batch.updates.map { (batch.messageID, $0) } }
        guard !rows.isEmpty || !jobs.isEmpty || !routes.isEmpty else { return }
        let messages = rows.map(\.0)
        let ids = rows.map(\.1.deviceID)
        let states = rows.map(\.1.state.rawValue)
        let reasons = rows.map { $0.1.apnsReason ?? "" }
        let retries = rows.map { $0.1.retryAt ?? Date(timeIntervalSince1970: 0) }
        let attempted = rows.map { $0.1.apnsAttempted ? Int32(1) : Int32(0) }
        // The copies whose messages record events (none for an app without events).
        var eventRows: [Int32] = []
        var eventData: [String] = []
        for (index, row) in rows.enumerated() {
            guard let event = row.1.event else { continue }
            eventRows.append(Int32(index + 1))
            eventData.append(event.json)
        }
        try await retryingDeadlocks {
            try await client.query(
                """
                WITH routed AS (DELETE FROM node_routes WHERE id = ANY(\(routes)::bigint[]))
                SELECT herald_record_deliveries(\(messages)::bigint[], \(ids)::bigint[], \(states)::text[], \(reasons)::text[],
                                                \(retries)::timestamptz[], \(attempted)::integer[], \(jobs.map(\.id))::bigint[],
                                                \(eventRows)::integer[], \(eventData)::jsonb[])
                """,
                logger: logger
            )
        }
    }

    /// Removes finished jobs and marks their push messages fanned out, in one statement.
    public func finishJobs(_ jobs: [PushJob]) async throws {
        try await recordDeliveries([], finishing: jobs)
    }

    /// Extends the leases of jobs this node holds; returns how many it still holds.
    public func renewLeases(jobIDs: [Int64], node: String, lease: Duration) async throws -> Int {
        guard !jobIDs.isEmpty else { return 0 }
        return try await client.query(
            """
            UPDATE push_jobs SET leased_until = now() + make_interval(secs => \(lease.timeInterval))
            WHERE id = ANY(\(jobIDs)) AND leased_by = \(node) RETURNING id
            """,
            logger: logger
        ).count()
    }
}
