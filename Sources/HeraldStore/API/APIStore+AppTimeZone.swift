import Foundation
import HeraldCore
import PostgresNIO

extension APIStore {
    /// The zone an app's schedules use when they name none.
    public func appTimeZone(appID: Int64) async throws -> String? {
        let rows = try await client.query("SELECT time_zone FROM apps WHERE id = \(appID)", logger: logger)
        for try await zone in rows.decode(String.self) { return zone }
        return nil
    }

    /// Sets the zone an app's schedules use when they name none; those schedules are
    /// evaluated afresh from now, and the copies its quiet hours hold are judged again (the
    /// window is in the app's zone for devices that report none). False when there is no
    /// such app.
    public func setAppTimeZone(appID: Int64, _ zone: String, now: Date = Date()) async throws -> Bool {
        try await transaction { connection in
            let updated = try await connection.query(
                "UPDATE apps SET time_zone = \(zone) WHERE id = \(appID) RETURNING id",
                logger: logger
            ).count()
            guard updated == 1 else { return false }
            try await connection.query(
                """
                UPDATE schedules SET evaluated_until = \(now), next_fire_at = \(now)
                WHERE app_id = \(appID) AND time_zone IS NULL AND finished_at IS NULL
                """,
                logger: logger
            )
            try await connection.query(
                """
                UPDATE deliveries dl SET next_attempt_at = now()
                WHERE dl.state = 'held' AND dl.next_attempt_at > now()
                  AND EXISTS (SELECT 1 FROM messages m WHERE m.id = dl.message_id AND m.app_id = \(appID))
                """,
                logger: logger
            )
            try await connection.query("NOTIFY \(unescaped: ScheduleStore.schedulesChannel)", logger: logger)
            return true
        }
    }
}
