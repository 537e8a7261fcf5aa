import Foundation
import HeraldCore
import PostgresNIO

/// Reading schedule rows, shared by the API's operations and the schedulers.
extension ScheduleStore {
    /// The columns ``records(_:)`` reads, from `schedules s`.
    static let columns = """
        s.schedule_id::text, s.cid, s.name, s.enabled, s.trigger::text, s.push::text, s.time_zone, s.local_time,
        s.finished_at IS NOT NULL, s.next_fire_at, s.created_at, s.updated_at
        """

    static func records(_ rows: PostgresRowSequence) async throws -> [ScheduleRecord] {
        var records: [ScheduleRecord] = []
        for try await row in rows.decode(
            (String, String?, String, Bool, String, String, String?, Bool, Bool, Date?, Date, Date).self
        ) {
            let trigger = try ScheduleTrigger(json: JSONDecoder().decode(JSONValue.self, from: Data(row.4.utf8)))
            let push = try JSONDecoder().decode(PushRequest.self, from: Data(row.5.utf8))
            records.append(
                ScheduleRecord(
                    scheduleID: row.0,
                    cid: row.1,
                    definition: ScheduleDefinition(
                        name: row.2,
                        enabled: row.3,
                        trigger: trigger,
                        push: push,
                        timeZone: row.6,
                        localTime: row.7
                    ),
                    pushJSON: row.5,
                    finished: row.8,
                    nextFireAt: row.9,
                    createdAt: row.10,
                    updatedAt: row.11
                )
            )
        }
        return records
    }

    func schedule(appID: Int64, scheduleID: String, on connection: PostgresConnection) async throws -> ScheduleRecord? {
        guard UUID(uuidString: scheduleID) != nil else { return nil }
        let rows = try await connection.query(
            "SELECT \(unescaped: Self.columns) FROM schedules s WHERE s.app_id = \(appID) AND s.schedule_id = \(scheduleID)::uuid",
            logger: logger
        )
        return try await Self.records(rows).first
    }

    func schedule(appID: Int64, cid: String, on connection: PostgresConnection) async throws -> ScheduleRecord? {
        let rows = try await connection.query(
            "SELECT \(unescaped: Self.columns) FROM schedules s WHERE s.app_id = \(appID) AND s.cid = \(cid)",
            logger: logger
        )
        return try await Self.records(rows).first
    }

    /// The app's zone for schedules, its row held FOR KEY SHARE until the caller commits
    /// (the app stays while its schedule is written).
    func lockedAppZone(appID: Int64, on connection: PostgresConnection) async throws -> String {
        let rows = try await connection.query("SELECT time_zone FROM apps WHERE id = \(appID) FOR KEY SHARE", logger: logger)
        for try await zone in rows.decode(String.self) { return zone }
        throw HeraldError(.appNotFound, "the app was deleted")
    }

    /// A stored zone name as a zone (UTC for a name the system no longer knows).
    static func zone(_ name: String) -> TimeZone {
        TimeZone(identifier: name) ?? TimeZone(identifier: "UTC")!
    }

    /// When a schedule made or changed at `now` is first looked at; nil: never (it can't
    /// fire again).
    static func firstEvaluation(_ definition: ScheduleDefinition, zone: TimeZone, now: Date) -> Date? {
        ScheduleEvaluation(
            trigger: definition.trigger,
            zone: zone,
            localTime: definition.localTime,
            evaluatedUntil: now,
            now: now,
            grace: 0
        ).nextFireAt
    }

    static func text(_ value: JSONValue) -> String {
        String(decoding: value.bytes, as: UTF8.self)
    }

    static func pushJSON(_ definition: ScheduleDefinition) -> String {
        String(decoding: definition.push.storedJSON, as: UTF8.self)
    }
}
