import Foundation
import HeraldCore
import PostgresNIO

extension CenterStore {
    /// Extends a job's lease; false when another worker took it over.
    public func renewLease(jobID: Int64, node: String, lease: Duration) async throws -> Bool {
        try await renewLeases(jobIDs: [jobID], node: node, lease: lease) > 0
    }

    /// Removes a finished job; a push job also marks its message fanned out.
    public func finishJob(_ job: PushJob) async throws {
        try await finishJobs([job])
    }

    /// Gives a job back to be retried after `delay` (a failure that isn't the job's fault).
    public func releaseJob(_ job: PushJob, delay: Duration) async throws {
        let seconds = Double(delay.components.seconds)
        try await client.query(
            """
            UPDATE push_jobs SET leased_until = NULL, leased_by = NULL, available_at = now() + make_interval(secs => \(seconds))
            WHERE id = \(job.id)
            """,
            logger: logger
        )
    }

    /// The message a job is about, or nil when it is gone (its app was deleted).
    public func message(id: Int64) async throws -> MessageRecord? {
        try await messages(ids: [id])[id]
    }

    /// Fans out the next batch of a push job in one transaction: the next `limit` devices
    /// of the audience after the job's cursor get a delivery row and, when the message is
    /// stored (`payload` non-nil), an inbox row under their next sequence number; the
    /// cursor moves past them. Returns the batch (empty: the audience is exhausted) and
    /// nil when the message was recalled or replaced meanwhile.
    public func fanOutBatch(
        job: PushJob,
        message: MessageRecord,
        payload: DevicePayloads?,
        limit: Int,
        node: String,
        lease: Duration
    ) async throws -> [FanOutTarget]? {
        try await retryingDeadlocks {
            try await transaction { connection in
                try await fanOutBatch(job: job, message: message, payload: payload, limit: limit, node: node, lease: lease, on: connection)
            }
        }
    }

    /// The first batch of each of several fresh jobs, in one transaction (one commit for
    /// all of them; see ``fanOutBatch(job:message:payload:limit:node:lease:)``). Returns
    /// each job's batch by job id, nil for a job whose message was recalled or replaced.
    public func fanOutFirstBatches(
        _ jobs: [FanOutWork],
        limit: Int,
        node: String,
        lease: Duration
    ) async throws -> [Int64: [FanOutTarget]?] {
        guard !jobs.isEmpty else { return [:] }
        return try await retryingDeadlocks {
            try await transaction { connection in
                var batches: [Int64: [FanOutTarget]?] = [:]
                for work in jobs {
                    batches[work.job.id] = try await fanOutBatch(
                        job: work.job,
                        message: work.message,
                        payload: work.payload,
                        limit: limit,
                        node: node,
                        lease: lease,
                        on: connection
                    )
                }
                return batches
            }
        }
    }

    private func fanOutBatch(
        job: PushJob,
        message: MessageRecord,
        payload: DevicePayloads?,
        limit: Int,
        node: String,
        lease: Duration,
        on connection: PostgresConnection
    ) async throws -> [FanOutTarget]? {
        let state = try await connection.query(
            """
            SELECT j.cursor_device, m.recalled_at IS NULL AND m.superseded_at IS NULL
            FROM push_jobs j JOIN messages m ON m.id = j.message_id WHERE j.id = \(job.id) AND j.leased_by = \(node)
            FOR UPDATE OF j
            """,
            logger: logger
        )
        var cursor: Int64?
        for try await (position, live) in state.decode((Int64, Bool).self) {
            guard live else { return nil }
            cursor = position
        }
        guard let cursor else { throw HeraldError(.conflict, "job \(job.id) was taken over") }
        let audience = message.push.audience
        let rows = try await connection.query(
            """
            SELECT \(unescaped: FanOutTarget.columns), NULL::bigint, NULL::integer
            FROM devices d WHERE d.app_id = \(message.appID) AND d.id > \(cursor)
              AND \(audienceFilter: audience, appID: message.appID, after: cursor)
            ORDER BY d.id LIMIT \(Int64(limit)) FOR NO KEY UPDATE OF d
            """,
            logger: logger
        )
        var targets = try await Self.targets(rows)
        guard let last = targets.last?.deviceID else { return targets }
        if message.isDeliveryControlled {
            try await storeControlled(message: message, payload: payload, in: &targets, on: connection)
        } else {
            try await store(message: message, payload: payload, in: &targets, ids: targets.map(\.deviceID), on: connection)
        }
        try await connection.query(
            """
            UPDATE push_jobs SET cursor_device = \(last),
                leased_until = now() + make_interval(secs => \(Double(lease.components.seconds)))
            WHERE id = \(job.id)
            """,
            logger: logger
        )
        return targets
    }

    /// Inbox rows (``InboxCopies``), delivery rows and badges for a batch.
    func store(
        message: MessageRecord,
        payload: DevicePayloads?,
        in targets: inout [FanOutTarget],
        ids: [Int64],
        on connection: PostgresConnection
    ) async throws {
        let rows = try await connection.query(
            """
            WITH copies AS (
                SELECT 1::bigint AS k, id AS device_id, \(payload != nil)::boolean AS stored FROM unnest(\(ids)::bigint[]) AS id
            ), contents AS (
                SELECT 1::bigint AS k, \(message.msgID)::text AS msg_id, \(ByteBuffer(bytes: payload?.standard ?? []))::bytea AS payload,
                       \(ByteBuffer(bytes: payload?.android ?? []))::bytea AS android_payload, \(message.expiresAt)::timestamptz AS expires_at
            ), \(unescaped: InboxCopies.ctes), delivered AS (
                INSERT INTO deliveries (message_id, device_id, inbox_seq) SELECT \(message.id), device_id, seq FROM numbered
                ON CONFLICT DO NOTHING
            )
            SELECT device_id, seq FROM numbered WHERE seq IS NOT NULL
            """,
            logger: logger
        )
        var seqs: [Int64: Int64] = [:]
        for try await (id, seq) in rows.decode((Int64, Int64).self) { seqs[id] = seq }
        for index in targets.indices { targets[index].inboxSeq = seqs[targets[index].deviceID] }
        try await updateBadges(message: message, in: &targets, ids: ids, on: connection)
    }

    /// Sets or changes the badge of a batch's devices, when the push does.
    private func updateBadges(message: MessageRecord, in targets: inout [FanOutTarget], ids: [Int64], on connection: PostgresConnection) async throws
    {
        var badgeSet: Int32?
        var badgeChange: Int32?
        switch message.push.notification?.ios?.badge {
        case .set(let value): badgeSet = Int32(clamping: value)
        case .change(let delta): badgeChange = Int32(clamping: delta)
        case nil: return
        }
        let rows = try await connection.query(
            """
            UPDATE devices SET
                badge = CASE WHEN \(badgeSet)::integer IS NOT NULL THEN \(badgeSet)::integer
                             ELSE GREATEST(badge + \(badgeChange)::integer, 0) END
            WHERE id = ANY(\(ids)) RETURNING id, badge
            """,
            logger: logger
        )
        var badges: [Int64: Int32] = [:]
        for try await (id, badge) in rows.decode((Int64, Int32).self) { badges[id] = badge }
        for index in targets.indices { targets[index].badge = badges[targets[index].deviceID].map(Int.init) }
    }

    /// Deliveries of a message fanned out but never routed (their worker died), with what
    /// routing needs, after `cursor` in device order.
    public func unroutedTargets(messageID: Int64, after cursor: Int64, limit: Int) async throws -> [FanOutTarget] {
        let rows = try await client.query(
            """
            SELECT \(unescaped: FanOutTarget.columns), dl.inbox_seq, d.badge
            FROM deliveries dl JOIN devices d ON d.id = dl.device_id
            WHERE dl.message_id = \(messageID) AND dl.state = 'pending' AND dl.device_id > \(cursor)
            ORDER BY dl.device_id LIMIT \(Int64(limit))
            """,
            logger: logger
        )
        return try await Self.targets(rows)
    }

    /// Decodes rows of ``FanOutTarget/columns``, inbox seq and badge.
    static func targets(_ rows: PostgresRowSequence) async throws -> [FanOutTarget] {
        var targets: [FanOutTarget] = []
        for try await row in rows {
            if let target = try FanOutTarget(row.makeRandomAccess(), at: 0) { targets.append(target) }
        }
        return targets
    }
}
