import Foundation
import HeraldCore
import PostgresNIO

/// An app's quiet hours and daily cap, applied to each copy of its operations pushes when
/// it is fanned out (migration 0021), in the device's local time (its `time_zone`, else
/// the app's): a copy inside the quiet window is held (state `held`, not in the inbox)
/// until the window ends, or dropped; a copy over the device's cap for its local day is
/// dropped.
extension CenterStore {
    /// How each device of a batch stands with the app's controls at this moment.
    private struct Judgement {
        var quiet: Bool
        var hold: Bool
        var quietEnd: Date
        var day: String
        var cap: Int?
    }

    /// Stores a batch of a controlled push: the copies let through as ``store(message:payload:in:ids:on:)``
    /// does, counted against the cap; the others as `held` or `dropped` delivery rows,
    /// marked ``FanOutTarget/isWithheld`` so they are not routed.
    func storeControlled(
        message: MessageRecord,
        payload: DevicePayloads?,
        in targets: inout [FanOutTarget],
        on connection: PostgresConnection
    )
        async throws
    {
        let judged = try await judge(targets.map(\.deviceID), on: connection)
        var counted: [Int64] = []
        var days: [String] = []
        var withheld: [(id: Int64, state: String, reason: String?, until: Date?)] = []
        for target in targets {
            guard let judgement = judged[target.deviceID] else { continue }  // deleted meanwhile
            if judgement.quiet {
                withheld.append(judgement.hold ? (target.deviceID, "held", nil, judgement.quietEnd) : (target.deviceID, "dropped", "QuietHours", nil))
            } else if judgement.cap != nil {
                counted.append(target.deviceID)
                days.append(judgement.day)
            }
        }
        let over = try await countAgainstCap(counted, days: days, judged: judged, on: connection)
        withheld += over.map { ($0, "dropped", "DailyCap", nil) }
        let held = Set(withheld.map(\.id))
        var admitted = targets.filter { !held.contains($0.deviceID) && judged[$0.deviceID] != nil }
        try await store(message: message, payload: payload, in: &admitted, ids: admitted.map(\.deviceID), on: connection)
        if !withheld.isEmpty {
            try await connection.query(
                """
                INSERT INTO deliveries (message_id, device_id, state, apns_reason, next_attempt_at)
                SELECT \(message.id), v.id, v.state, NULLIF(v.reason, ''), CASE WHEN v.until > 'epoch'::timestamptz THEN v.until END
                FROM unnest(\(withheld.map(\.id))::bigint[], \(withheld.map(\.state))::text[], \(withheld.map { $0.reason ?? "" })::text[],
                            \(withheld.map { $0.until ?? Date(timeIntervalSince1970: 0) })::timestamptz[]) AS v(id, state, reason, until)
                ON CONFLICT DO NOTHING
                """,
                logger: logger
            )
        }
        let stored = Dictionary(uniqueKeysWithValues: admitted.map { ($0.deviceID, $0) })
        for index in targets.indices {
            if let copy = stored[targets[index].deviceID] {
                targets[index] = copy
            } else {
                targets[index].isWithheld = true
            }
        }
    }

    /// Each device's local time against the app's quiet hours, the window's end as an
    /// instant (today's end, or tomorrow's once today's has passed), its local day, and
    /// the app's cap.
    private func judge(_ ids: [Int64], on connection: PostgresConnection) async throws -> [Int64: Judgement] {
        let rows = try await connection.query(
            """
            WITH local AS (
                SELECT d.id, z.zone, now() AT TIME ZONE z.zone AS lt,
                       a.quiet_hours_start AS qs, a.quiet_hours_end AS qe, a.quiet_hours_action AS qa, a.daily_cap
                FROM devices d JOIN apps a ON a.id = d.app_id
                CROSS JOIN LATERAL (SELECT herald_zone(d.time_zone, a.time_zone) AS zone) z
                WHERE d.id = ANY(\(ids))
            )
            SELECT id,
                   COALESCE(CASE WHEN qs < qe THEN lt::time >= qs AND lt::time < qe ELSE lt::time >= qs OR lt::time < qe END, false),
                   COALESCE(qa, 'hold') = 'hold',
                   COALESCE((CASE WHEN lt::time < qe THEN lt::date + qe ELSE lt::date + 1 + qe END) AT TIME ZONE zone, now()),
                   to_char(lt, 'YYYY-MM-DD'), daily_cap
            FROM local
            """,
            logger: logger
        )
        var judged: [Int64: Judgement] = [:]
        for try await (id, quiet, hold, end, day, cap) in rows.decode((Int64, Bool, Bool, Date, String, Int32?).self) {
            judged[id] = Judgement(quiet: quiet, hold: hold, quietEnd: end, day: day, cap: cap.map(Int.init))
        }
        return judged
    }

    /// Counts one more push for each device on its local day; returns the devices that
    /// went over their cap with it. Each device's row is locked by its update, so two
    /// pushes fanned out at once can't both take the last place.
    private func countAgainstCap(
        _ ids: [Int64],
        days: [String],
        judged: [Int64: Judgement],
        on connection: PostgresConnection
    ) async throws
        -> [Int64]
    {
        guard !ids.isEmpty else { return [] }
        let rows = try await connection.query(
            """
            INSERT INTO device_daily_pushes AS c (device_id, day, pushes)
            SELECT id, day::date, 1 FROM unnest(\(ids)::bigint[], \(days)::text[]) AS v(id, day) ORDER BY id
            ON CONFLICT (device_id, day) DO UPDATE SET pushes = c.pushes + 1
            RETURNING device_id, pushes
            """,
            logger: logger
        )
        var over: [Int64] = []
        for try await (id, pushes) in rows.decode((Int64, Int32).self) {
            if let cap = judged[id]?.cap, Int(pushes) > cap { over.append(id) }
        }
        return over
    }

    /// Held copies whose quiet hours have ended, by message: at most `limit` messages.
    public func heldCopiesDue(limit: Int) async throws -> [Int64] {
        let rows = try await client.query(
            """
            SELECT DISTINCT message_id FROM (
                SELECT message_id FROM deliveries WHERE state = 'held' AND next_attempt_at <= now()
                ORDER BY next_attempt_at LIMIT 10000
            ) due LIMIT \(Int64(limit))
            """,
            logger: logger
        )
        var ids: [Int64] = []
        for try await id in rows.decode(Int64.self) { ids.append(id) }
        return ids
    }

    /// Releases up to `limit` of a message's held copies that are due, in one transaction:
    /// each goes into its device's inbox (state `pending`, to be routed by the caller), is
    /// dropped when the device's cap for its local day is reached meanwhile, or expires
    /// with its message. Returns the targets to route (withheld ones marked). Nodes
    /// releasing the same message at once take different copies (SKIP LOCKED).
    public func releaseHeld(message: MessageRecord, payload: DevicePayloads?, limit: Int) async throws -> [FanOutTarget] {
        try await retryingDeadlocks {
            try await transaction { connection in
                let rows = try await connection.query(
                    """
                    WITH due AS (
                        SELECT device_id FROM deliveries
                        WHERE message_id = \(message.id) AND state = 'held' AND next_attempt_at <= now()
                        ORDER BY device_id LIMIT \(Int64(limit)) FOR UPDATE SKIP LOCKED
                    ), gone AS (
                        UPDATE deliveries dl SET state = \(message.superseded ? "replaced" : message.recalled ? "recalled" : "expired"),
                            next_attempt_at = NULL
                        FROM due WHERE dl.message_id = \(message.id) AND dl.device_id = due.device_id
                          AND (NOT \(message.isLive) OR \(message.expiresAt) <= now())
                        RETURNING dl.device_id
                    ), released AS (
                        DELETE FROM deliveries dl USING due
                        WHERE dl.message_id = \(message.id) AND dl.device_id = due.device_id
                          AND \(message.isLive) AND \(message.expiresAt) > now()
                        RETURNING dl.device_id
                    )
                    SELECT \(unescaped: FanOutTarget.columns), NULL::bigint, NULL::integer
                    FROM devices d WHERE d.id IN (SELECT device_id FROM released) ORDER BY d.id
                    """,
                    logger: logger
                )
                var targets = try await Self.targets(rows)
                guard !targets.isEmpty else { return [] }
                // Released: counted against the cap of the day they go out, and stored.
                try await storeControlled(message: message, payload: payload, in: &targets, on: connection)
                return targets
            }
        }
    }
}
