import Foundation
import HeraldCore
import PostgresNIO

extension DeviceStore {
    /// The rows of a batch that would break a rule, by line, with the reason (see
    /// ``importDevices(appID:_:)``); one statement. Run after the batch's alias locks.
    func refusals(appID: Int64, _ devices: [ImportedDevice], on connection: PostgresConnection) async throws -> [Int: String] {
        let tagged = devices.filter { !$0.tags.isEmpty }
        let rows = try await connection.query(
            """
            WITH input AS (
                SELECT i.line, i.rid, NULLIF(i.apns, '') AS apns, NULLIF(i.voip, '') AS voip, NULLIF(i.alias, '') AS alias
                FROM unnest(\(devices.map { Int32($0.line) })::integer[], \(devices.map(\.registrationID))::text[],
                            \(devices.map { $0.apnsToken ?? "" })::text[], \(devices.map { $0.voipToken ?? "" })::text[],
                            \(devices.map { $0.alias ?? "" })::text[]) AS i(line, rid, apns, voip, alias)
            ), existing AS (
                SELECT i.line, d.id, d.app_id FROM input i JOIN devices d ON d.registration_id = i.rid
            ), row_tags AS (
                SELECT r.line, r.tag FROM unnest(\(tagged.flatMap { device in device.tags.map { _ in Int32(device.line) } })::integer[],
                                                 \(tagged.flatMap(\.tags))::text[]) AS r(line, tag)
            ), first_checks AS (
                SELECT e.line, 1 AS rank, 'registration_id: belongs to another app' AS reason
                FROM existing e WHERE e.app_id <> \(appID)
                UNION ALL
                SELECT i.line, 2, 'apns_token: held by device ' || d.registration_id || ' of this app'
                FROM input i JOIN devices d ON d.app_id = \(appID) AND d.apns_token = i.apns AND d.registration_id <> i.rid
                UNION ALL
                SELECT line, 2, 'apns_token: also on an earlier row of the file'
                FROM (SELECT line, row_number() OVER (PARTITION BY apns ORDER BY line) AS n FROM input WHERE apns IS NOT NULL) t
                WHERE n > 1
                UNION ALL
                SELECT i.line, 3, 'voip_token: held by device ' || d.registration_id || ' of this app'
                FROM input i JOIN devices d ON d.app_id = \(appID) AND d.voip_token = i.voip AND d.registration_id <> i.rid
                UNION ALL
                SELECT line, 3, 'voip_token: also on an earlier row of the file'
                FROM (SELECT line, row_number() OVER (PARTITION BY voip ORDER BY line) AS n FROM input WHERE voip IS NOT NULL) t
                WHERE n > 1
                UNION ALL
                SELECT e.line, 4, 'tags: a device may have at most \(unescaped: String(Limits.maxTagsPerDevice)) tags (this row would make '
                    || (h.have + n.new)::text || ')'
                FROM existing e
                JOIN (SELECT t.device_id, count(*) AS have FROM device_tags t
                      WHERE t.device_id IN (SELECT id FROM existing WHERE app_id = \(appID)) GROUP BY t.device_id) h ON h.device_id = e.id
                JOIN (SELECT r.line, count(*) AS new FROM row_tags r JOIN existing x ON x.line = r.line
                      WHERE NOT EXISTS (SELECT 1 FROM device_tags t WHERE t.app_id = \(appID) AND t.tag = r.tag AND t.device_id = x.id)
                      GROUP BY r.line) n ON n.line = e.line
                WHERE e.app_id = \(appID) AND h.have + n.new > \(unescaped: String(Limits.maxTagsPerDevice))
            ), alias_rows AS (
                SELECT i.line, i.rid, i.alias FROM input i
                WHERE i.alias IS NOT NULL AND NOT EXISTS (SELECT 1 FROM first_checks f WHERE f.line = i.line)
            ), alias_others AS (
                SELECT a.alias, count(*) AS n
                FROM (SELECT DISTINCT alias FROM alias_rows) a
                JOIN devices d ON d.app_id = \(appID) AND d.alias = a.alias
                WHERE NOT EXISTS (SELECT 1 FROM alias_rows r WHERE r.alias = a.alias AND r.rid = d.registration_id)
                GROUP BY a.alias
            ), alias_places AS (
                SELECT r.line, COALESCE(o.n, 0) + row_number() OVER (PARTITION BY r.alias ORDER BY r.line) AS place
                FROM alias_rows r LEFT JOIN alias_others o ON o.alias = r.alias
            )
            SELECT line, reason FROM (
                SELECT DISTINCT ON (line) line, reason FROM first_checks ORDER BY line, rank
            ) f
            UNION ALL
            SELECT line, 'alias: an alias may be set on at most \(unescaped: String(Limits.maxDevicesPerAlias)) devices'
            FROM alias_places WHERE place > \(unescaped: String(Limits.maxDevicesPerAlias))
            """,
            logger: logger
        )
        var refused: [Int: String] = [:]
        for try await (line, reason) in rows.decode((Int32, String).self) {
            refused[Int(line)] = reason
        }
        return refused
    }
}
