import Foundation
import HeraldCore
import PostgresNIO

/// Firing schedules: what every node's scheduler does, on the durable pool (a fired push
/// is accepted as the API accepts one: committed before anything else happens to it).
extension APIStore {
    /// Claims the schedule due earliest (`next_fire_at` at or before `now`) that no other
    /// scheduler holds, and in one transaction evaluates it (``ScheduleEvaluation``),
    /// accepts the push of each occurrence that fires (message, job and NOTIFY: the
    /// statements of ``acceptPush(_:push:appID:now:)``), records every occurrence in
    /// `schedule_runs` and moves the schedule on. Two schedulers never handle one schedule
    /// at once (`FOR UPDATE SKIP LOCKED`), and the key of `schedule_runs` makes firing one
    /// occurrence twice impossible even if they did: the run is written before its push,
    /// and a run already there stores no push.
    /// - Returns: the occurrences handled, or nil when nothing was due.
    public func fireDueSchedule(now: Date, grace: TimeInterval) async throws -> [FiredRun]? {
        try await retryingDeadlocks {
            try await transaction { connection in
                let due = try await connection.query(
                    """
                    SELECT s.id, s.schedule_id::text, s.app_id, s.trigger::text, s.push::text, s.time_zone, s.local_time,
                           s.evaluated_until
                    FROM schedules s
                    WHERE s.enabled AND s.next_fire_at <= \(now)
                    ORDER BY s.next_fire_at LIMIT 1 FOR UPDATE SKIP LOCKED
                    """,
                    logger: logger
                )
                var claimed: (Int64, String, Int64, String, String, String?, Bool, Date)?
                for try await row in due.decode((Int64, String, Int64, String, String, String?, Bool, Date).self) { claimed = row }
                guard let (id, scheduleID, appID, triggerJSON, pushJSON, ownZone, localTime, evaluatedUntil) = claimed else { return nil }
                // The app stays while its schedule fires (and gives its zone when the
                // schedule names none).
                let appZone = try await schedules.lockedAppZone(appID: appID, on: connection)
                let zone = ScheduleStore.zone(ownZone ?? appZone)
                let trigger = try ScheduleTrigger(json: JSONDecoder().decode(JSONValue.self, from: Data(triggerJSON.utf8)))
                let evaluation = ScheduleEvaluation(
                    trigger: trigger,
                    zone: zone,
                    localTime: localTime,
                    deviceZones: localTime ? try await deviceZones(appID: appID, on: connection) : [],
                    evaluatedUntil: evaluatedUntil,
                    now: now,
                    grace: grace
                )
                var fired: [FiredRun] = []
                for run in evaluation.runs {
                    let outcome = try await handle(run, pushJSON: pushJSON, appID: appID, fallback: zone, now: now, on: connection)
                    guard let outcome else { continue }
                    let stored = try await connection.query(
                        """
                        INSERT INTO schedule_runs (schedule_id, occurrence, time_zone, state, msg_id, error_code, error_message, fired_at)
                        VALUES (\(id), \(run.occurrence), \(run.zone ?? ""), \(outcome.state.rawValue), \(outcome.msgID),
                                \(outcome.error.map { Int32($0.code.rawValue) }), \(outcome.error?.message), \(now))
                        ON CONFLICT DO NOTHING RETURNING 1
                        """,
                        logger: logger
                    ).count()
                    guard stored == 1 else { continue }  // handled before: never twice
                    if let push = outcome.push, let msgID = outcome.msgID {
                        try await insertMessage(
                            json: outcome.json ?? pushJSON,
                            push: push,
                            msgID: msgID,
                            cid: nil,
                            appID: appID,
                            now: now,
                            recordsEvents: nil,
                            on: connection
                        )
                    }
                    fired.append(
                        FiredRun(scheduleID: scheduleID, occurrence: run.occurrence, timeZone: run.zone, state: outcome.state, msgID: outcome.msgID)
                    )
                }
                let next = evaluation.nextFireAt
                try await connection.query(
                    """
                    UPDATE schedules SET evaluated_until = GREATEST(evaluated_until, \(now)), next_fire_at = \(next),
                        finished_at = \(next == nil ? now : nil)
                    WHERE id = \(id)
                    """,
                    logger: logger
                )
                return fired
            }
        }
    }

    /// What an occurrence becomes: its push (validated from the stored request, narrowed
    /// to its zone for a local-time schedule) with a new msg_id when it fires and its
    /// audience matches a device; `failed` when the push is refused now; `missed`. Nil for
    /// a local-time schedule's zone none of whose devices the push is for: no run.
    private func handle(
        _ run: ScheduleEvaluation.Run,
        pushJSON: String,
        appID: Int64,
        fallback: TimeZone,
        now: Date,
        on connection: PostgresConnection
    ) async throws -> RunOutcome? {
        var push: Push
        var resolvedJSON: String?
        do {
            var request = try JSONDecoder().decode(PushRequest.self, from: Data(pushJSON.utf8))
            // Each occurrence is a push accepted now: it carries its category as it is now.
            if let name = request.namedCategory,
                let category = try await CategoryStore.category(appID: appID, identifier: name, on: connection, logger: logger)
            {
                request = request.carrying(categoryConfig: category.config)
                resolvedJSON = String(decoding: request.storedJSON, as: UTF8.self)
            }
            push = try request.validated()
        } catch let error as PSQLError {
            throw error
        } catch {
            let refused = error as? HeraldError ?? HeraldError(.invalidField, "push: the stored push no longer decodes")
            return RunOutcome(state: .failed, error: refused)
        }
        if let zone = run.zone {
            push.audience.timeZone = AudienceTimeZone(zone: zone, fallback: fallback.identifier)
        }
        let reaches = try await audienceSize(appID: appID, audience: push.audience, limit: 1, on: connection) > 0
        if run.zone != nil, !reaches { return nil }
        guard run.fires else { return RunOutcome(state: .missed) }
        guard reaches else {
            return RunOutcome(state: .failed, error: HeraldError(.noAudienceMatch, "audience: no device of this app matches; nothing was sent"))
        }
        return RunOutcome(state: .sent, msgID: try await msgIDs.next(), push: push, json: resolvedJSON)
    }

    /// The zones the app's devices reported, read from the index on (app, zone) one zone
    /// at a time rather than device by device.
    private func deviceZones(appID: Int64, on connection: PostgresConnection) async throws -> [TimeZone] {
        let rows = try await connection.query(
            """
            WITH RECURSIVE zones(zone) AS (
                (SELECT time_zone FROM devices WHERE app_id = \(appID) AND time_zone IS NOT NULL ORDER BY time_zone LIMIT 1)
                UNION ALL
                SELECT (SELECT d.time_zone FROM devices d WHERE d.app_id = \(appID) AND d.time_zone > z.zone ORDER BY d.time_zone LIMIT 1)
                FROM zones z WHERE z.zone IS NOT NULL
            )
            SELECT zone FROM zones WHERE zone IS NOT NULL
            """,
            logger: logger
        )
        var zones: [TimeZone] = []
        for try await name in rows.decode(String.self) {
            if let zone = TimeZone(identifier: name) { zones.append(zone) }
        }
        return zones
    }

    /// How many devices of the app the audience matches (at most `limit`), on `connection`.
    func audienceSize(appID: Int64, audience: ValidatedAudience, limit: Int, on connection: PostgresConnection) async throws -> Int {
        let rows = try await connection.query(
            """
            SELECT count(*) FROM (SELECT 1 FROM devices d WHERE d.app_id = \(appID) AND \(audienceFilter: audience, appID: appID)
            LIMIT \(Int64(limit))) AS matched
            """,
            logger: logger
        )
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    /// The earliest time a schedule is due, if any is.
    public func nextScheduleDue() async throws -> Date? {
        let rows = try await client.query(
            "SELECT min(next_fire_at) FROM schedules WHERE enabled AND next_fire_at IS NOT NULL",
            logger: logger
        )
        for try await next in rows.decode(Date?.self) { return next }
        return nil
    }
}

/// An occurrence a scheduler handled.
public struct FiredRun: Sendable, Hashable {
    public var scheduleID: String
    public var occurrence: Date
    public var timeZone: String?
    public var state: ScheduleRun.State
    public var msgID: String?
}

private struct RunOutcome {
    var state: ScheduleRun.State
    var msgID: String?
    var push: Push?
    var error: HeraldError?
    /// The push's request as the message stores it, when it differs from the schedule's
    /// (it carries its category's configuration).
    var json: String? = nil
}
