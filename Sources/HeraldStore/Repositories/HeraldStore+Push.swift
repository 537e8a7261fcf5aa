import Foundation
import HeraldCore
import PostgresNIO

extension HeraldStore {
    /// The channel workers LISTEN on; a committed job NOTIFYs it.
    public static let jobsChannel = "herald_jobs"

    /// How long a cid is remembered.
    public static let cidWindow: TimeInterval = 24 * 3600

    /// Accepts a push: the message and its fan-out job are committed in one transaction
    /// before this returns. A cid seen within 24 hours returns the first push's id and
    /// stores nothing. A replacing push supersedes the app's earlier messages with that
    /// identifier: their undelivered copies are cancelled.
    public func acceptPush(_ request: PushRequest, push: Push, appID: Int64, now: Date = Date()) async throws -> AcceptedPush {
        let json = String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
        for attempt in 1...3 {
            do {
                return try await transaction { connection in
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
                    let msgID = Identifiers.newMessageID(milliseconds: UInt64(max(0, now.timeIntervalSince1970 * 1000)))
                    if let replace = push.replace {
                        try await supersede(appID: appID, identifier: replace, on: connection)
                    }
                    let expiresAt = now.addingTimeInterval(TimeInterval(push.timeToLive))
                    let rows = try await connection.query(
                        """
                        INSERT INTO messages (msg_id, app_id, cid, request, identifier, replaces, time_to_live, expires_at, created_at)
                        VALUES (\(msgID), \(appID), \(push.cid), \(json)::jsonb, \(push.identifier(messageID: msgID)), \(push.replace),
                                \(push.timeToLive), \(expiresAt), \(now))
                        RETURNING id
                        """,
                        logger: logger
                    )
                    var messageID: Int64?
                    for try await id in rows.decode(Int64.self) { messageID = id }
                    guard let messageID else { throw HeraldError(.internalError, "message was not stored") }
                    try await connection.query(
                        "INSERT INTO push_jobs (message_id, kind) VALUES (\(messageID), 'push')",
                        logger: logger
                    )
                    try await connection.query("NOTIFY herald_jobs", logger: logger)
                    return AcceptedPush(msgID: msgID, cid: push.cid, repeated: false)
                }
            } catch  where Self.sqlState(error) == "23505" && attempt < 3 {
                continue  // The same cid committed concurrently: read it back.
            }
        }
        throw HeraldError(.internalError, "push was not accepted")
    }

    /// Accepts pushes without a cid or a replace in one statement: their messages, their
    /// jobs and one NOTIFY are committed together (a group commit; see ``PushAcceptor``).
    /// A push to explicit registration ids or aliases is stored only if one of them names
    /// a device of its app; the others were checked by the caller. Returns the message
    /// ids stored; when it throws, none was.
    func acceptPushes(_ pushes: [PendingPush]) async throws -> Set<String> {
        guard !pushes.isEmpty else { return [] }
        var wanted = ExplicitAudienceRows()
        for (index, push) in pushes.enumerated() {
            wanted.append(key: Int64(index + 1), registrationIDs: push.registrationIDs, aliases: push.aliases)
        }
        let checked = pushes.map { $0.registrationIDs == nil && $0.aliases == nil }
        // The rows are read to the end: an error raised while the statement executes
        // (after its row description) arrives with them, not from query().
        let rows = try await client.query(
            """
            WITH input AS (
                SELECT * FROM unnest(\(pushes.map(\.msgID))::text[], \(pushes.map(\.appID))::bigint[], \(pushes.map(\.json))::text[],
                                     \(pushes.map(\.identifier))::text[], \(pushes.map(\.timeToLive))::integer[],
                                     \(pushes.map(\.expiresAt))::timestamptz[], \(pushes.map(\.createdAt))::timestamptz[], \(checked)::boolean[])
                    WITH ORDINALITY AS v(msg_id, app_id, request, identifier, ttl, expires_at, created_at, checked, idx)
            ), wanted AS (
                SELECT * FROM unnest(\(wanted.keys)::bigint[], \(wanted.registrationIDs)::text[], \(wanted.aliases)::text[]) AS w(idx, rid, alias)
            ), matched AS (
                SELECT w.idx FROM wanted w JOIN input i ON i.idx = w.idx
                WHERE EXISTS (SELECT 1 FROM devices d WHERE d.app_id = i.app_id AND d.registration_id = NULLIF(w.rid, ''))
                   OR EXISTS (SELECT 1 FROM devices d WHERE d.app_id = i.app_id AND d.alias = NULLIF(w.alias, ''))
            ), m AS (
                INSERT INTO messages (msg_id, app_id, request, identifier, time_to_live, expires_at, created_at)
                SELECT i.msg_id, i.app_id, i.request::jsonb, i.identifier, i.ttl, i.expires_at, i.created_at
                FROM input i WHERE i.checked OR i.idx IN (SELECT idx FROM matched)
                ORDER BY i.idx
                RETURNING id, msg_id
            ), j AS (
                INSERT INTO push_jobs (message_id, kind) SELECT id, 'push' FROM m ORDER BY id RETURNING id
            )
            SELECT m.msg_id FROM m CROSS JOIN (SELECT pg_notify(\(Self.jobsChannel), count(*)::text) FROM j) AS notified
            """,
            logger: logger
        )
        var stored: Set<String> = []
        for try await msgID in rows.decode(String.self) { stored.insert(msgID) }
        return stored
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
            DELETE FROM device_messages dm USING deliveries dl, devices d
            WHERE dl.message_id = ANY(\(messageIDs)) AND dl.inbox_seq IS NOT NULL AND dm.device_id = dl.device_id
              AND dm.seq = dl.inbox_seq AND d.id = dl.device_id AND dm.seq > d.acked_seq
            """,
            logger: logger
        )
        try await connection.query(
            """
            UPDATE deliveries dl SET state = \(state), next_attempt_at = NULL FROM devices d
            WHERE dl.message_id = ANY(\(messageIDs)) AND d.id = dl.device_id AND dl.state IN ('pending', 'waiting')
              AND NOT (dl.inbox_seq IS NOT NULL AND dl.inbox_seq <= d.acked_seq)
            """,
            logger: logger
        )
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

extension PostgresQuery.StringInterpolation {
    /// The audience as a condition on `devices d`: every filter given must hold (AND);
    /// `tag` matches any of its tags, `tag_and` all, `tag_not` none.
    /// `after`: only devices with a greater id are wanted (a fan-out's cursor); the tag
    /// lookup starts there in the tag index instead of reading the tag from its start.
    mutating func appendInterpolation(audienceFilter audience: ValidatedAudience, appID: Int64, after cursor: Int64 = 0) {
        appendLiteral("(")
        appendInterpolation(audience.registrationIDs)
        appendLiteral("::text[] IS NULL OR d.registration_id = ANY(")
        appendInterpolation(audience.registrationIDs)
        appendLiteral("::text[])) AND (")
        appendInterpolation(audience.aliases)
        appendLiteral("::text[] IS NULL OR d.alias = ANY(")
        appendInterpolation(audience.aliases)
        appendLiteral("::text[])) AND (")
        appendInterpolation(audience.tags)
        appendLiteral("::text[] IS NULL OR d.id IN (SELECT t.device_id FROM device_tags t WHERE t.app_id = ")
        appendInterpolation(appID)
        appendLiteral(" AND t.device_id > ")
        appendInterpolation(cursor)
        appendLiteral(" AND t.tag = ANY(")
        appendInterpolation(audience.tags)
        appendLiteral("::text[]))) AND (")
        appendInterpolation(audience.tagsAnd)
        appendLiteral("::text[] IS NULL OR (SELECT count(*) FROM device_tags t WHERE t.app_id = ")
        appendInterpolation(appID)
        appendLiteral(" AND t.device_id = d.id AND t.tag = ANY(")
        appendInterpolation(audience.tagsAnd)
        appendLiteral("::text[])) = cardinality(")
        appendInterpolation(audience.tagsAnd)
        appendLiteral("::text[])) AND (")
        appendInterpolation(audience.tagsNot)
        appendLiteral("::text[] IS NULL OR NOT EXISTS (SELECT 1 FROM device_tags t WHERE t.app_id = ")
        appendInterpolation(appID)
        appendLiteral(" AND t.device_id = d.id AND t.tag = ANY(")
        appendInterpolation(audience.tagsNot)
        appendLiteral("::text[])))")
    }
}
