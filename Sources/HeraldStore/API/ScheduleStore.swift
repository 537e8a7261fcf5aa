import Foundation
import HeraldCore
import PostgresNIO

/// Schedules (`/v3/schedules`), per app, on the durable pool (``APIStore/schedules``).
public struct ScheduleStore: StoreFacade {
    let core: StoreCore
}

extension APIStore {
    /// Schedules (`/v3/schedules`), per app, on the durable pool.
    public var schedules: ScheduleStore { ScheduleStore(core: core) }
}

/// Schedules (`/v3/schedules`): made, read, changed and deleted per app. The schedulers
/// fire them (``fireDueSchedule(now:grace:)``); every change here wakes them with a NOTIFY
/// on ``schedulesChannel`` (they also poll, so a lost one only costs time).
extension ScheduleStore {
    /// The channel a changed schedule NOTIFYs.
    public static let schedulesChannel = "herald_schedules"

    /// Makes a schedule, or answers the one made earlier with the same cid. The app may have
    /// ``ScheduleDefinition/maxActivePerApp`` active schedules; the trigger must still
    /// fire (``ScheduleDefinition/checkTiming(now:zone:)``, in the schedule's zone).
    /// - Returns: the schedule, and whether it was made earlier with this cid.
    public func create(
        appID: Int64,
        _ definition: ScheduleDefinition,
        cid: String?,
        now: Date = Date()
    ) async throws -> (schedule: ScheduleRecord, repeated: Bool) {
        for attempt in 1...3 {
            do {
                return try await transaction { connection in
                    let appZone = try await lockedAppZone(appID: appID, on: connection)
                    if let cid, let earlier = try await schedule(appID: appID, cid: cid, on: connection) {
                        return (earlier, true)
                    }
                    let active = try await connection.query(
                        "SELECT count(*) FROM schedules WHERE app_id = \(appID) AND finished_at IS NULL",
                        logger: logger
                    )
                    for try await count in active.decode(Int64.self) where count >= ScheduleDefinition.maxActivePerApp {
                        throw HeraldError(
                            .invalidSchedule,
                            "the app has \(count) active schedules, the most it may have (\(ScheduleDefinition.maxActivePerApp)); delete one first"
                        )
                    }
                    let zone = Self.zone(definition.timeZone ?? appZone)
                    try definition.checkTiming(now: now, zone: zone)
                    let next = Self.firstEvaluation(definition, zone: zone, now: now)
                    let scheduleID = UUID().uuidString.lowercased()
                    try await connection.query(
                        """
                        INSERT INTO schedules (schedule_id, app_id, cid, name, enabled, trigger, push, time_zone, local_time,
                                               evaluated_until, next_fire_at, finished_at, created_at, updated_at)
                        VALUES (\(scheduleID)::uuid, \(appID), \(cid), \(definition.name), \(definition.enabled),
                                \(Self.text(definition.trigger.json))::json, \(Self.pushJSON(definition))::json,
                                \(definition.timeZone), \(definition.localTime), \(now), \(next), \(next == nil ? now : nil),
                                \(now), \(now))
                        """,
                        logger: logger
                    )
                    try await connection.query("NOTIFY \(unescaped: Self.schedulesChannel)", logger: logger)
                    guard let made = try await schedule(appID: appID, scheduleID: scheduleID, on: connection) else {
                        throw HeraldError(.internalError, "schedule was not stored")
                    }
                    return (made, false)
                }
            } catch  where Self.sqlState(error) == "23505" && attempt < 3 {
                continue  // The same cid committed concurrently: read it back.
            }
        }
        throw HeraldError(.internalError, "schedule was not created")
    }

    /// A page (from 1) of the app's active schedules, oldest first, and how many there are.
    public func list(appID: Int64, page: Int, pageSize: Int) async throws -> SchedulePage {
        try await client.withConnection { connection in
            let counted = try await connection.query(
                "SELECT count(*) FROM schedules WHERE app_id = \(appID) AND finished_at IS NULL",
                logger: logger
            )
            var total = 0
            for try await count in counted.decode(Int64.self) { total = Int(count) }
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.columns) FROM schedules s WHERE s.app_id = \(appID) AND s.finished_at IS NULL
                ORDER BY s.created_at, s.id LIMIT \(Int64(pageSize)) OFFSET \(Int64(max(0, page - 1)) * Int64(pageSize))
                """,
                logger: logger
            )
            return SchedulePage(total: total, schedules: try await Self.records(rows))
        }
    }

    /// The app's schedule with this id (finished or not), or nil.
    public func find(appID: Int64, scheduleID: String) async throws -> ScheduleRecord? {
        try await client.withConnection { try await schedule(appID: appID, scheduleID: scheduleID, on: $0) }
    }

    /// Changes an active schedule with `change` (given its definition, the new one) and
    /// answers it changed. A change to when it fires (trigger, zone, local time, enabled)
    /// starts its evaluation afresh from `now`: occurrences before are neither fired nor
    /// recorded missed.
    /// - Throws: `scheduleNotFound` for no such schedule or a finished one.
    public func update(
        appID: Int64,
        scheduleID: String,
        now: Date = Date(),
        _ change: @Sendable (ScheduleDefinition) throws -> ScheduleDefinition
    ) async throws -> ScheduleRecord {
        guard UUID(uuidString: scheduleID) != nil else { throw Self.scheduleNotFound(scheduleID) }
        return try await transaction { connection in
            let appZone = try await lockedAppZone(appID: appID, on: connection)
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.columns) FROM schedules s
                WHERE s.app_id = \(appID) AND s.schedule_id = \(scheduleID)::uuid FOR UPDATE
                """,
                logger: logger
            )
            guard let existing = try await Self.records(rows).first, !existing.finished else {
                throw Self.scheduleNotFound(scheduleID)
            }
            let updated = try change(existing.definition)
            let zone = Self.zone(updated.timeZone ?? appZone)
            try updated.checkTiming(now: now, zone: zone)
            let old = existing.definition
            let timing =
                old.trigger != updated.trigger || old.timeZone != updated.timeZone || old.localTime != updated.localTime
                || old.enabled != updated.enabled
            if timing {
                let next = Self.firstEvaluation(updated, zone: zone, now: now)
                try await connection.query(
                    """
                    UPDATE schedules SET evaluated_until = \(now), next_fire_at = \(next), finished_at = \(next == nil ? now : nil)
                    WHERE schedule_id = \(scheduleID)::uuid
                    """,
                    logger: logger
                )
            }
            try await connection.query(
                """
                UPDATE schedules SET name = \(updated.name), enabled = \(updated.enabled), trigger = \(Self.text(updated.trigger.json))::json,
                    push = \(Self.pushJSON(updated))::json, time_zone = \(updated.timeZone), local_time = \(updated.localTime),
                    updated_at = \(now)
                WHERE schedule_id = \(scheduleID)::uuid
                """,
                logger: logger
            )
            try await connection.query("NOTIFY \(unescaped: Self.schedulesChannel)", logger: logger)
            guard let changed = try await schedule(appID: appID, scheduleID: scheduleID, on: connection) else {
                throw Self.scheduleNotFound(scheduleID)
            }
            return changed
        }
    }

    /// Deletes a schedule (finished or not) with its history. False when there was none.
    public func delete(appID: Int64, scheduleID: String) async throws -> Bool {
        guard UUID(uuidString: scheduleID) != nil else { return false }
        return try await client.query(
            "DELETE FROM schedules WHERE app_id = \(appID) AND schedule_id = \(scheduleID)::uuid RETURNING id",
            logger: logger
        ).count() > 0
    }

    /// What a schedule's occurrences became, oldest first; nil when the app has no such
    /// schedule.
    public func runs(appID: Int64, scheduleID: String) async throws -> [ScheduleRun]? {
        guard UUID(uuidString: scheduleID) != nil else { return nil }
        return try await client.withConnection { connection in
            let found = try await connection.query(
                "SELECT id FROM schedules WHERE app_id = \(appID) AND schedule_id = \(scheduleID)::uuid",
                logger: logger
            )
            var id: Int64?
            for try await value in found.decode(Int64.self) { id = value }
            guard let id else { return nil }
            let rows = try await connection.query(
                """
                SELECT occurrence, time_zone, state, msg_id, error_code, error_message, fired_at FROM schedule_runs
                WHERE schedule_id = \(id) ORDER BY occurrence, time_zone
                """,
                logger: logger
            )
            var runs: [ScheduleRun] = []
            for try await (occurrence, zone, state, msgID, code, message, firedAt) in rows.decode(
                (Date, String, String, String?, Int32?, String?, Date).self
            ) {
                runs.append(
                    ScheduleRun(
                        occurrence: occurrence,
                        timeZone: zone.isEmpty ? nil : zone,
                        state: ScheduleRun.State(rawValue: state) ?? .failed,
                        msgID: msgID,
                        error: code.map { HeraldError(HeraldError.Code(rawValue: Int($0)) ?? .internalError, message ?? "") },
                        firedAt: firedAt
                    )
                )
            }
            return runs
        }
    }

    static func scheduleNotFound(_ scheduleID: String) -> HeraldError {
        HeraldError(.scheduleNotFound, "schedule_id: no active schedule \(scheduleID) in this app (it never existed, was deleted, or has finished)")
    }
}
