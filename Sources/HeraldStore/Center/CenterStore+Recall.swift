import Foundation
import HeraldCore
import PostgresNIO

/// A device that got a recalled message, and every identifier still pending recall on it.
public struct RecallTarget: Sendable, Hashable {
    public var target: FanOutTarget
    /// How the recalled message reached it: over APNs (so the system shows it).
    public var viaAPNs: Bool
    public var identifiers: [String]
    /// The latest recall among `identifiers`: the jobs of one recall request share it, a
    /// later recall (even of the same identifiers) has its own.
    public var recalledAt: Date
}

extension CenterStore {

    /// The next devices (after `cursor`) that got a recalled message, each with every
    /// identifier pending recall on it within `window`.
    public func recallTargets(messageID: Int64, after cursor: Int64, limit: Int, window: TimeInterval) async throws -> [RecallTarget] {
        let since = Date().addingTimeInterval(-window)
        let rows = try await client.query(
            """
            SELECT \(unescaped: FanOutTarget.columns), NULL::bigint, d.badge, dl.state = 'apns',
                   ARRAY(SELECT r.identifier FROM device_recalls r WHERE r.device_id = d.id AND r.recalled_at > \(since)
                         ORDER BY r.recalled_at, r.identifier),
                   (SELECT max(r.recalled_at) FROM device_recalls r WHERE r.device_id = d.id AND r.recalled_at > \(since))
            FROM deliveries dl JOIN devices d ON d.id = dl.device_id
            WHERE dl.message_id = \(messageID) AND dl.device_id > \(cursor)
              AND EXISTS (SELECT 1 FROM device_recalls r JOIN messages m ON m.id = \(messageID)
                          WHERE r.device_id = d.id AND r.identifier = m.identifier)
            ORDER BY dl.device_id LIMIT \(Int64(limit))
            """,
            logger: logger
        )
        var targets: [RecallTarget] = []
        for try await row in rows {
            let cells = row.makeRandomAccess()
            guard let target = try FanOutTarget(cells, at: 0) else { continue }
            let after = FanOutTarget.columnCount
            targets.append(
                RecallTarget(
                    target: target,
                    viaAPNs: try cells[after].decode(Bool.self),
                    identifiers: try cells[after + 1].decode([String].self),
                    recalledAt: try cells[after + 2].decode(Date?.self) ?? since
                )
            )
        }
        return targets
    }

    /// Moves a recall job's cursor (and its lease) past the devices handled.
    public func advanceJob(_ job: PushJob, cursor: Int64, lease: Duration) async throws {
        try await client.query(
            """
            UPDATE push_jobs SET cursor_device = \(cursor),
                leased_until = now() + make_interval(secs => \(Double(lease.components.seconds)))
            WHERE id = \(job.id)
            """,
            logger: logger
        )
    }

    /// The device confirmed (acknowledged) a recall command with these identifiers.
    public func recallsConfirmed(deviceID: Int64, identifiers: [String]) async throws {
        try await client.query(
            "DELETE FROM device_recalls WHERE device_id = \(deviceID) AND identifier = ANY(\(identifiers))",
            logger: logger
        )
    }
}
