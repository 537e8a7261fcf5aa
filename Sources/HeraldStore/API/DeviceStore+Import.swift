import Foundation
import HeraldCore
import PostgresNIO

/// What one batch of an import did.
public struct DeviceImportOutcome: Sendable, Hashable {
    /// Devices the batch created.
    public var created = 0
    /// Devices that existed and that the batch changed (a field or a new tag).
    public var updated = 0
    /// Devices that existed already as the rows say: a file sent again changes nothing.
    public var unchanged = 0
    /// Rows refused, in line order.
    public var rejected: [RejectedImportRow] = []

    public init() {}
}

extension DeviceStore {
    /// Upserts a batch of imported devices by registration id in one transaction of a few
    /// statements, whatever the batch's size: every device of the batch is written by the
    /// same INSERT … ON CONFLICT, every tag by the same INSERT.
    ///
    /// A row that would break a rule is left out and reported, and the others are written:
    /// its registration id belongs to another app; its APNs or VoIP token is held by
    /// another device of the app (or an earlier row of the batch); its device would have
    /// more than ``Limits/maxTagsPerDevice`` tags; its alias already has
    /// ``Limits/maxDevicesPerAlias`` devices (rows take the places left in line order).
    ///
    /// A device that exists takes what the row states: platform, tokens, alias and mobile
    /// are set from the row when it has them, and kept when it doesn't; the row's tags are
    /// added to the device's (an import never removes a tag, a token, an alias or a
    /// secret). So sending a file again, or the rest of it after a failure, writes nothing
    /// twice and loses nothing. New devices have no secret until an installation claims
    /// them (see ``registerDevice(appKey:_:proof:)``).
    ///
    /// Rows must have distinct registration ids (a later row for the same device belongs
    /// in a later batch).
    public func importDevices(appID: Int64, _ devices: [ImportedDevice]) async throws -> DeviceImportOutcome {
        guard !devices.isEmpty else { return DeviceImportOutcome() }
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await transaction { connection in
                    try await importBatch(appID: appID, devices, on: connection)
                }
            } catch  where attempt < 4 && ["23505", "40P01", "40001"].contains(Self.sqlState(error)) {
                // A registration took one of the batch's tokens (or a deadlock with a device
                // change) between the checks and the writes: the batch is checked again.
                try await Task.sleep(for: .milliseconds(20 * attempt))
            }
        }
    }

    private func importBatch(appID: Int64, _ devices: [ImportedDevice], on connection: PostgresConnection) async throws -> DeviceImportOutcome {
        let aliases = Array(Set(devices.compactMap(\.alias))).sorted()
        if !aliases.isEmpty {
            // The locks ``updateDevice`` takes for an alias, so neither can push an alias past its limit.
            _ = try await connection.query(
                """
                SELECT pg_advisory_xact_lock(hashtextextended('alias:' || \(appID)::text || ':' || a, 0))
                FROM unnest(\(aliases)::text[]) AS a ORDER BY a
                """,
                logger: logger
            ).count()
        }
        var outcome = DeviceImportOutcome()
        let refused = try await refusals(appID: appID, devices, on: connection)
        let registrationIDs = Dictionary(uniqueKeysWithValues: devices.map { ($0.line, $0.registrationID) })
        outcome.rejected = refused.sorted { $0.key < $1.key }.map { line, reason in
            RejectedImportRow(line: line, registrationID: registrationIDs[line], reason: reason)
        }
        let accepted = devices.filter { refused[$0.line] == nil }
        guard !accepted.isEmpty else { return outcome }

        let written = try await connection.query(
            """
            INSERT INTO devices AS d (app_id, registration_id, platform, apns_token, apns_environment, voip_token, alias, mobile)
            SELECT \(appID), i.rid, i.platform, NULLIF(i.apns, ''), NULLIF(i.env, ''), NULLIF(i.voip, ''), NULLIF(i.alias, ''),
                NULLIF(i.mobile, '')
            FROM unnest(\(accepted.map(\.registrationID))::text[], \(accepted.map(\.platform.rawValue))::text[],
                        \(accepted.map { $0.apnsToken ?? "" })::text[], \(accepted.map { $0.apnsEnvironment?.rawValue ?? "" })::text[],
                        \(accepted.map { $0.voipToken ?? "" })::text[], \(accepted.map { $0.alias ?? "" })::text[],
                        \(accepted.map { $0.mobile ?? "" })::text[])
                AS i(rid, platform, apns, env, voip, alias, mobile)
            ON CONFLICT (registration_id) DO UPDATE SET
                platform = EXCLUDED.platform,
                apns_token = COALESCE(EXCLUDED.apns_token, d.apns_token),
                apns_environment = CASE WHEN EXCLUDED.apns_token IS NULL THEN d.apns_environment ELSE EXCLUDED.apns_environment END,
                token_valid = CASE WHEN EXCLUDED.apns_token IS DISTINCT FROM d.apns_token AND EXCLUDED.apns_token IS NOT NULL
                    THEN true ELSE d.token_valid END,
                token_invalidated_at = CASE WHEN EXCLUDED.apns_token IS DISTINCT FROM d.apns_token AND EXCLUDED.apns_token IS NOT NULL
                    THEN NULL ELSE d.token_invalidated_at END,
                voip_token = COALESCE(EXCLUDED.voip_token, d.voip_token),
                alias = COALESCE(EXCLUDED.alias, d.alias),
                mobile = COALESCE(EXCLUDED.mobile, d.mobile),
                updated_at = now()
            WHERE d.app_id = \(appID)
              AND (d.platform, d.apns_token, d.apns_environment, d.voip_token, d.alias, d.mobile)
                  IS DISTINCT FROM (EXCLUDED.platform, COALESCE(EXCLUDED.apns_token, d.apns_token),
                      CASE WHEN EXCLUDED.apns_token IS NULL THEN d.apns_environment ELSE EXCLUDED.apns_environment END,
                      COALESCE(EXCLUDED.voip_token, d.voip_token), COALESCE(EXCLUDED.alias, d.alias), COALESCE(EXCLUDED.mobile, d.mobile))
            RETURNING d.registration_id, (d.xmax = 0) AS inserted
            """,
            logger: logger
        )
        var created = Set<String>()
        var changed = Set<String>()
        for try await (registrationID, inserted) in written.decode((String, Bool).self) {
            if inserted { created.insert(registrationID) } else { changed.insert(registrationID) }
        }

        let tagged = accepted.filter { !$0.tags.isEmpty }
        if !tagged.isEmpty {
            let rows = try await connection.query(
                """
                WITH added AS (
                    INSERT INTO device_tags (app_id, tag, device_id)
                    SELECT \(appID), r.tag, d.id
                    FROM unnest(\(tagged.flatMap { device in device.tags.map { _ in device.registrationID } })::text[],
                                \(tagged.flatMap(\.tags))::text[]) AS r(rid, tag)
                    JOIN devices d ON d.registration_id = r.rid AND d.app_id = \(appID)
                    ON CONFLICT DO NOTHING
                    RETURNING device_id
                )
                UPDATE devices d SET updated_at = now() WHERE d.id IN (SELECT device_id FROM added)
                RETURNING d.registration_id
                """,
                logger: logger
            )
            for try await registrationID in rows.decode(String.self) where !created.contains(registrationID) {
                changed.insert(registrationID)
            }
        }
        outcome.created = created.count
        outcome.updated = changed.count
        outcome.unchanged = accepted.count - created.count - changed.count
        return outcome
    }
}
