import Foundation
import HeraldCore
import PostgresNIO

extension APIStore {
    /// How long a cid is remembered.
    public static let cidWindow: TimeInterval = 24 * 3600

    /// A new message id (``MessageIDs``), for a push about to be accepted.
    public func newMsgID() async throws -> String {
        try await msgIDs.next()
    }

    /// Accepts a push: the message and its fan-out job are committed in one transaction
    /// before this returns. A cid seen within 24 hours returns the first push's id and
    /// stores nothing. A replacing push supersedes the app's earlier messages with that
    /// identifier: their undelivered copies are cancelled.
    /// `appRecordsEvents`: the app records every event (``EventApps``); a push with a
    /// callback records its own in any case.
    public func acceptPush(
        _ request: PushRequest,
        push: Push,
        appID: Int64,
        now: Date = Date(),
        appRecordsEvents: Bool = false,
        audit: AuditEntry? = nil
    ) async throws -> AcceptedPush {
        let json = String(decoding: request.storedJSON, as: UTF8.self)
        let recordsEvents = appRecordsEvents || push.callback != nil
        let msgID = try await msgIDs.next()
        for attempt in 1...3 {
            do {
                return try await transaction { connection in
                    // What the foreign key to the app did (migration 0007): the app is
                    // still there, and stays until this commits.
                    let app = try await connection.query("SELECT id FROM apps WHERE id = \(appID) FOR KEY SHARE", logger: logger)
                    guard try await app.count() == 1 else {
                        throw HeraldError(.appNotFound, "the app was deleted; nothing was sent")
                    }
                    if let cid = push.cid {
                        let rows = try await connection.query(
                            "SELECT id, msg_id, created_at FROM messages WHERE app_id = \(appID) AND cid = \(cid) FOR UPDATE",
                            logger: logger
                        )
                        for try await (id, msgID, createdAt) in rows.decode((Int64, String, Date).self) {
                            if now.timeIntervalSince(createdAt) < Self.cidWindow {
                                return AcceptedPush(msgID: msgID, cid: cid, repeated: true)
                            }
                            try await connection.query("UPDATE messages SET cid = NULL WHERE id = \(id)", logger: logger)
                        }
                    }
                    try await insertMessage(
                        json: json,
                        push: push,
                        msgID: msgID,
                        cid: push.cid,
                        appID: appID,
                        now: now,
                        recordsEvents: recordsEvents,
                        on: connection
                    )
                    if let audit { try await AuditStore.appendPendingAudit([audit], on: connection, logger: logger) }
                    return AcceptedPush(msgID: msgID, cid: push.cid, repeated: false)
                }
            } catch  where Self.sqlState(error) == "23505" && attempt < 3 {
                continue  // The same cid committed concurrently: read it back.
            }
        }
        throw HeraldError(.internalError, "push was not accepted")
    }

    /// Stores an accepted push on `connection`, inside the caller's transaction: a replace
    /// supersedes the app's earlier messages with its identifier, then the message, its job
    /// and the NOTIFY that wakes the centers. The statements ``acceptPush(_:push:appID:now:)``
    /// commits, shared with the schedulers (``fireDueSchedule(now:grace:)``), so a scheduled
    /// push is accepted exactly as the API accepts one. A push narrowed to a time zone
    /// (a local-time schedule's) has it written on its message by one more statement.
    func insertMessage(
        json: String,
        push: Push,
        msgID: String,
        cid: String?,
        appID: Int64,
        now: Date,
        recordsEvents: Bool?,
        on connection: PostgresConnection
    ) async throws {
        if let replace = push.replace {
            try await supersede(appID: appID, identifier: replace, on: connection)
        }
        let expiresAt = now.addingTimeInterval(TimeInterval(push.timeToLive))
        // Whether its events are recorded: as the caller knows, else as the app says (an app
        // records every event when it asks to or has a webhook; a push with a callback, its own).
        let rows = try await connection.query(
            """
            INSERT INTO messages (msg_id, app_id, cid, request, identifier, replaces, time_to_live, expires_at, created_at, events, source)
            VALUES (\(msgID), \(appID), \(cid), \(json)::json, \(push.identifier(msgID: msgID)), \(push.replace),
                    \(push.timeToLive), \(expiresAt), \(now),
                    COALESCE(\(recordsEvents), \(push.callback != nil)
                             OR EXISTS (SELECT 1 FROM apps WHERE id = \(appID) AND events_enabled)
                             OR EXISTS (SELECT 1 FROM webhooks WHERE app_id = \(appID))),
                    \(push.source))
            RETURNING id, events
            """,
            logger: logger
        )
        var inserted: (Int64, Bool)?
        for try await row in rows.decode((Int64, Bool).self) { inserted = row }
        guard let (messageID, events) = inserted else { throw HeraldError(.internalError, "message was not stored") }
        if events {
            try await recordAcceptance(messageID: messageID, msgID: msgID, appID: appID, callback: push.callback, on: connection)
        }
        if let timeZone = push.audience.timeZone {
            try await connection.query(
                """
                UPDATE messages SET audience_time_zone = \(timeZone.zone), audience_default_zone = \(timeZone.fallback)
                WHERE id = \(messageID)
                """,
                logger: logger
            )
        }
        try await connection.query(
            "INSERT INTO push_jobs (message_id, kind) VALUES (\(messageID), 'push')",
            logger: logger
        )
        try await connection.query("NOTIFY herald_jobs", logger: logger)
    }

    /// Accepts pushes without a cid or a replace in one statement: their messages, their
    /// jobs and one NOTIFY are committed together (a group commit; see ``PushAcceptor``).
    /// A push to explicit registration ids or aliases is stored only if one of them names
    /// a device of its app; the others were checked by the caller.
    ///
    /// A push marked to fan out at acceptance (``FannedOutPushSink``) is fanned out in the
    /// same statement, as ``CenterStore/fanOutExplicit(_:)`` fans out a claimed job: its
    /// copies are numbered and stored (``InboxCopies``; several copies for one device in
    /// the order of the pushes), delivery rows are written, and its job is stored leased to
    /// `sink.node` with its cursor past the end. No NOTIFY is sent for those: no other
    /// worker may take them while the lease holds. The caller hands them to the sink.
    ///
    /// Returns the message ids stored and the pushes fanned out; when it throws, nothing
    /// was stored.
    public func acceptPushes(_ pushes: [PendingPush], fanningOutTo sink: (any FannedOutPushSink)? = nil) async throws -> AcceptedPushes {
        guard !pushes.isEmpty else { return AcceptedPushes() }
        var wanted = ExplicitAudienceRows()
        for (index, push) in pushes.enumerated() {
            wanted.append(key: Int64(index + 1), registrationIDs: push.registrationIDs, aliases: push.aliases)
        }
        let checked = pushes.map { $0.registrationIDs == nil && $0.aliases == nil }
        let fansOut = pushes.map { $0.fansOut && sink != nil }
        let inboxed = pushes.map { $0.devicePayloads != nil }
        let payloads = pushes.map { ByteBuffer(bytes: $0.devicePayloads?.standard ?? []) }
        let androidPayloads = pushes.map { ByteBuffer(bytes: $0.devicePayloads?.android ?? []) }
        let lease = (sink?.lease ?? .zero).timeInterval
        let node = sink?.node ?? ""
        let peerDeadAfter = sink?.peerRouting?.deadAfter.timeInterval ?? 0
        let accepted = try await retryingDeadlocks {
            // The rows are read to the end: an error raised while the statement executes
            // (after its row description) arrives with them, not from query().
            let rows = try await client.execute(
                AcceptPushesStatement(
                    pushes: pushes,
                    wanted: wanted,
                    checked: checked,
                    fansOut: fansOut,
                    inboxed: inboxed,
                    payloads: payloads,
                    androidPayloads: androidPayloads,
                    lease: lease,
                    node: node,
                    peerDeadAfter: peerDeadAfter
                ),
                logger: logger
            )
            var accepted = AcceptedPushes()
            var fannedOut: [Int: FannedOutPush] = [:]
            for try await row in rows {
                let index = Int(row.index) - 1
                accepted.stored.insert(pushes[index].msgID)
                guard fansOut[index], let target = row.target else { continue }
                let push = pushes[index]
                if let peer = row.routedTo {
                    fannedOut[index, default: push.fannedOut(job: row.jobID, messageID: row.messageID)].routedToPeers += 1
                    accepted.routedTo.insert(peer)
                } else {
                    fannedOut[index, default: push.fannedOut(job: row.jobID, messageID: row.messageID)].targets.append(target)
                }
            }
            accepted.fannedOut = fannedOut.sorted { $0.key < $1.key }.map(\.value)
            return accepted
        }
        await wakeNodes(accepted.routedTo)
        return accepted
    }

    /// Wakes the nodes copies were routed to (their ``ClusterChannel``), in a transaction of
    /// its own: a transaction that notifies holds a database-wide lock through its commit,
    /// and this one writes nothing, so its commit doesn't wait for the WAL to reach the
    /// disk. A lost wake-up costs only time: each node reads its routes at every tick.
    func wakeNodes(_ nodes: Set<String>) async {
        guard !nodes.isEmpty else { return }
        do {
            try await client.query(
                """
                SELECT set_config('synchronous_commit', 'off', true), pg_notify(\(unescaped: ClusterChannel.sql("v.node")), 'r')::text
                FROM unnest(\(Array(nodes))::text[]) AS v(node)
                """,
                logger: logger
            )
        } catch {
            logger.warning("cannot wake the nodes copies were routed to", metadata: ["error": "\(error)", "herald.nodes": "\(nodes.count)"])
        }
    }

    /// The push accepted earlier with this cid, within 24 hours.
    public func acceptedPush(appID: Int64, cid: String, now: Date = Date()) async throws -> AcceptedPush? {
        let rows = try await client.query(
            "SELECT msg_id, created_at FROM messages WHERE app_id = \(appID) AND cid = \(cid)",
            logger: logger
        )
        for try await (msgID, createdAt) in rows.decode((String, Date).self) where now.timeIntervalSince(createdAt) < Self.cidWindow {
            return AcceptedPush(msgID: msgID, cid: cid, repeated: true)
        }
        return nil
    }

    /// Marks the app's live messages with `identifier` as replaced and cancels their
    /// undelivered copies (inbox rows the device hasn't acknowledged, pending or waiting
    /// deliveries).
    func supersede(appID: Int64, identifier: String, on connection: PostgresConnection) async throws {
        let rows = try await connection.query(
            """
            UPDATE messages SET superseded_at = now()
            WHERE app_id = \(appID) AND identifier = \(identifier) AND superseded_at IS NULL AND recalled_at IS NULL
            RETURNING id
            """,
            logger: logger
        )
        var ids: [Int64] = []
        for try await id in rows.decode(Int64.self) { ids.append(id) }
        guard !ids.isEmpty else { return }
        try await cancelUndelivered(messageIDs: ids, state: "replaced", on: connection)
    }

    /// Cancels copies not delivered yet: removes them from inboxes and marks them.
    func cancelUndelivered(messageIDs: [Int64], state: String, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            DELETE FROM device_messages dm USING deliveries dl LEFT JOIN device_acks a ON a.device_id = dl.device_id
            WHERE dl.message_id = ANY(\(messageIDs)) AND dl.inbox_seq IS NOT NULL AND dm.device_id = dl.device_id
              AND dm.seq = dl.inbox_seq AND dm.seq > COALESCE(a.acked_seq, 0)
            """,
            logger: logger
        )
        try await connection.query(
            """
            UPDATE deliveries dl SET state = \(state), next_attempt_at = NULL
            WHERE dl.message_id = ANY(\(messageIDs)) AND dl.state IN ('pending', 'waiting', 'held')
              AND NOT (dl.inbox_seq IS NOT NULL
                       AND dl.inbox_seq <= COALESCE((SELECT a.acked_seq FROM device_acks a WHERE a.device_id = dl.device_id), 0))
            """,
            logger: logger
        )
    }

    /// The identifier of the app's message `msgID` sent within `window` (JPush's
    /// `override_msg_id` replaces it), or nil when there is none.
    public func identifier(appID: Int64, msgID: String, within window: TimeInterval = cidWindow, now: Date = Date()) async throws -> String? {
        let rows = try await client.query(
            "SELECT identifier, created_at FROM messages WHERE app_id = \(appID) AND msg_id = \(msgID)",
            logger: logger
        )
        for try await (identifier, createdAt) in rows.decode((String, Date).self) where now.timeIntervalSince(createdAt) < window {
            return identifier
        }
        return nil
    }

    /// How many devices of the app the audience matches (at most `limit`).
    public func audienceSize(appID: Int64, audience: ValidatedAudience, limit: Int = .max) async throws -> Int {
        let rows = try await client.query(
            """
            SELECT count(*) FROM (SELECT 1 FROM devices d WHERE d.app_id = \(appID) AND \(audienceFilter: audience, appID: appID)
            LIMIT \(Int64(min(limit, Int(Int64.max)))) ) AS matched
            """,
            logger: logger
        )
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }
}
