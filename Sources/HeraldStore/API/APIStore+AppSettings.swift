import Foundation
import HeraldCore
import PostgresNIO

/// Changes to an app's settings (`PATCH /admin/v1/apps/{app_key}`): each field left nil
/// stays as it is; `.some(nil)` clears it.
public struct AppSettingsChange: Sendable, Hashable {
    /// Push requests a minute (0: none); cleared: the node's default.
    public var rateLimitPerMinute: Int??
    public var quietHours: QuietHours??
    public var dailyCap: Int??

    public init(rateLimitPerMinute: Int?? = nil, quietHours: QuietHours?? = nil, dailyCap: Int?? = nil) {
        self.rateLimitPerMinute = rateLimitPerMinute
        self.quietHours = quietHours
        self.dailyCap = dailyCap
    }
}

extension APIStore {
    /// Applies `change` to the app in one statement. Returns the updated app, or nil when
    /// there is no such app. A lower rate limit also empties the shared bucket down to it;
    /// a change of quiet hours makes the copies they hold due, to be judged again.
    public func updateApp(appKey: String, _ change: AppSettingsChange) async throws -> AppRecord? {
        guard Identifiers.isAppKey(appKey) else { return nil }
        let limit = change.rateLimitPerMinute.flatMap { $0.map { Int32(clamping: $0) } }
        let quiet = change.quietHours.flatMap { $0 }
        let cap = change.dailyCap.flatMap { $0.map { Int32(clamping: $0) } }
        let rows = try await client.query(
            """
            WITH app AS (
                UPDATE apps SET
                    rate_limit_per_minute = CASE WHEN \(change.rateLimitPerMinute != nil) THEN \(limit) ELSE rate_limit_per_minute END,
                    quiet_hours_start = CASE WHEN \(change.quietHours != nil)
                        THEN make_interval(secs => \(quiet.map { Int32($0.start) }))::time ELSE quiet_hours_start END,
                    quiet_hours_end = CASE WHEN \(change.quietHours != nil)
                        THEN make_interval(secs => \(quiet.map { Int32($0.end) }))::time ELSE quiet_hours_end END,
                    quiet_hours_action = CASE WHEN \(change.quietHours != nil) THEN \(quiet?.action.rawValue) ELSE quiet_hours_action END,
                    daily_cap = CASE WHEN \(change.dailyCap != nil) THEN \(cap) ELSE daily_cap END
                WHERE app_key = \(appKey)
                RETURNING \(unescaped: Self.appColumns)
            ), bucket AS (
                UPDATE app_rate_buckets b SET tokens = LEAST(b.tokens, app.rate_limit_per_minute)
                FROM app WHERE b.app_id = app.id AND app.rate_limit_per_minute IS NOT NULL
            ), rejudged AS (
                -- Quiet hours set, changed or removed: the app's held copies are due now, and
                -- the centre's release judges each again by the new window (released, or held
                -- until the new end). Reached through the partial index of held copies.
                UPDATE deliveries dl SET next_attempt_at = now()
                FROM app
                WHERE \(change.quietHours != nil) AND dl.state = 'held' AND dl.next_attempt_at > now()
                  AND EXISTS (SELECT 1 FROM messages m WHERE m.id = dl.message_id AND m.app_id = app.id)
            )
            SELECT * FROM app
            """,
            logger: logger
        )
        for try await row in rows { return Self.app(try Self.appRow(row.makeRandomAccess())) }
        return nil
    }
}
