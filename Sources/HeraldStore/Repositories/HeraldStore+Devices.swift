import Foundation
import HeraldCore
import PostgresNIO

extension HeraldStore {
    /// Registers a device, or finds the app's device with the same APNs (else VoIP) token.
    ///
    /// Either way the device gets a new secret: registration is how a device that lost
    /// its credentials (reinstall, restore) gets working ones again. A token that APNs had
    /// invalidated is valid again once the device registers it.
    public func registerDevice(appKey: String, _ registration: DeviceRegistration) async throws -> RegisteredDevice {
        guard let appID = try await appID(appKey: appKey) else {
            throw HeraldError(.appNotFound, "app_key: no app with this key")
        }
        let secret = Identifiers.newDeviceSecret()
        let secretHash = Data(SecretHash.digest(secret))
        let newID = Identifiers.newRegistrationID()
        let platform = registration.platform.rawValue
        let environment = registration.apnsToken == nil ? nil : (registration.apnsEnvironment ?? .production).rawValue
        let conflictTarget: String =
            if registration.apnsToken != nil {
                "ON CONFLICT (app_id, apns_token) WHERE apns_token IS NOT NULL"
            } else if registration.voipToken != nil {
                "ON CONFLICT (app_id, voip_token) WHERE voip_token IS NOT NULL"
            } else {
                ""
            }
        var query: PostgresQuery = try """
        INSERT INTO devices (app_id, registration_id, platform, secret_hash, apns_token, apns_environment, voip_token)
        VALUES (\(appID), \(newID), \(platform), \(secretHash), \(registration.apnsToken), \(environment), \(registration.voipToken))
        """
        if !conflictTarget.isEmpty {
            query.sql += """
                 \(conflictTarget) DO UPDATE SET
                    platform = EXCLUDED.platform, secret_hash = EXCLUDED.secret_hash,
                    apns_environment = COALESCE(EXCLUDED.apns_environment, devices.apns_environment),
                    voip_token = COALESCE(EXCLUDED.voip_token, devices.voip_token),
                    apns_token = COALESCE(EXCLUDED.apns_token, devices.apns_token),
                    token_valid = true, token_invalidated_at = NULL, updated_at = now()
                """
        }
        query.sql += " RETURNING registration_id"
        do {
            let rows = try await client.query(query, logger: logger)
            for try await registrationID in rows.decode(String.self) {
                return RegisteredDevice(registrationID: registrationID, deviceSecret: secret, created: registrationID == newID)
            }
        } catch  where Self.sqlState(error) == "23505" {
            throw HeraldError(.conflict, "voip_token: registered to another device of this app")
        }
        throw HeraldError(.internalError, "device was not registered")
    }

    /// The device these credentials belong to, or nil.
    public func authenticateDevice(registrationID: String, deviceSecret: String) async throws -> Principal? {
        guard Identifiers.isRegistrationID(registrationID) else { return nil }
        let rows = try await client.query(
            "SELECT app_id, secret_hash FROM devices WHERE registration_id = \(registrationID)",
            logger: logger
        )
        for try await (appID, hash) in rows.decode((Int64, Data).self) {
            return SecretHash.matches(deviceSecret, stored: Array(hash)) ? .device(appID: appID, registrationID: registrationID) : nil
        }
        return nil
    }

    /// A device of the app, with its tags.
    public func device(appID: Int64, registrationID: String) async throws -> DeviceRecord? {
        try await client.withConnection { connection in
            try await Self.device(appID: appID, registrationID: registrationID, on: connection, logger: logger)
        }
    }

    /// Applies `change` to a device in one transaction; returns the device afterwards.
    public func updateDevice(appID: Int64, registrationID: String, _ change: DeviceChange) async throws -> DeviceRecord {
        guard Identifiers.isRegistrationID(registrationID) else { throw Self.deviceNotFound(registrationID) }
        return try await transaction { connection in
            let locked = try await connection.query(
                "SELECT id FROM devices WHERE app_id = \(appID) AND registration_id = \(registrationID) FOR UPDATE",
                logger: logger
            )
            var found: Int64?
            for try await id in locked.decode(Int64.self) { found = id }
            guard let deviceID = found else { throw Self.deviceNotFound(registrationID) }

            try await applyTags(change, deviceID: deviceID, appID: appID, on: connection)
            try await applyAlias(change.alias, deviceID: deviceID, appID: appID, on: connection)
            try await applyTokens(change, deviceID: deviceID, appID: appID, on: connection)
            try await connection.query("UPDATE devices SET updated_at = now() WHERE id = \(deviceID)", logger: logger)

            guard let device = try await Self.device(appID: appID, registrationID: registrationID, on: connection, logger: logger) else {
                throw Self.deviceNotFound(registrationID)
            }
            return device
        }
    }

    /// Deletes a device. False when the app has no such device.
    public func deleteDevice(appID: Int64, registrationID: String) async throws -> Bool {
        guard Identifiers.isRegistrationID(registrationID) else { return false }
        return try await client.query(
            "DELETE FROM devices WHERE app_id = \(appID) AND registration_id = \(registrationID) RETURNING id",
            logger: logger
        ).count() > 0
    }

    private func applyTags(_ change: DeviceChange, deviceID: Int64, appID: Int64, on connection: PostgresConnection) async throws {
        if change.clearTags {
            try await connection.query("DELETE FROM device_tags WHERE device_id = \(deviceID)", logger: logger)
        }
        if !change.removeTags.isEmpty {
            try await connection.query(
                "DELETE FROM device_tags WHERE device_id = \(deviceID) AND tag = ANY(\(change.removeTags))",
                logger: logger
            )
        }
        guard !change.addTags.isEmpty else { return }
        try await connection.query(
            """
            INSERT INTO device_tags (app_id, tag, device_id)
            SELECT \(appID), tag, \(deviceID) FROM unnest(\(change.addTags)::text[]) AS tag
            ON CONFLICT DO NOTHING
            """,
            logger: logger
        )
        let rows = try await connection.query("SELECT count(*) FROM device_tags WHERE device_id = \(deviceID)", logger: logger)
        for try await count in rows.decode(Int.self) where count > Limits.maxTagsPerDevice {
            throw HeraldError.limit("tags", "a device may have at most \(Limits.maxTagsPerDevice) tags (this change would make \(count))")
        }
    }

    private func applyAlias(_ alias: DeviceChange.Update<String>?, deviceID: Int64, appID: Int64, on connection: PostgresConnection) async throws {
        switch alias {
        case nil:
            return
        case .clear:
            try await connection.query("UPDATE devices SET alias = NULL WHERE id = \(deviceID)", logger: logger)
        case .set(let alias):
            // Serialise changes to one alias so two devices can't both take the tenth place.
            _ = try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtextextended(\("alias:\(appID):\(alias)"), 0))",
                logger: logger
            ).count()
            let rows = try await connection.query(
                "SELECT count(*) FROM devices WHERE app_id = \(appID) AND alias = \(alias) AND id <> \(deviceID)",
                logger: logger
            )
            for try await others in rows.decode(Int.self) where others >= Limits.maxDevicesPerAlias {
                throw HeraldError.limit("alias", "an alias may be set on at most \(Limits.maxDevicesPerAlias) devices")
            }
            try await connection.query("UPDATE devices SET alias = \(alias) WHERE id = \(deviceID)", logger: logger)
        }
    }

    private func applyTokens(_ change: DeviceChange, deviceID: Int64, appID: Int64, on connection: PostgresConnection) async throws {
        switch change.apnsToken {
        case nil:
            break
        case .clear:
            try await connection.query("UPDATE devices SET apns_token = NULL, apns_environment = NULL WHERE id = \(deviceID)", logger: logger)
        case .set(let token):
            // A token belongs to the installation that registered it last.
            try await connection.query(
                "UPDATE devices SET apns_token = NULL WHERE app_id = \(appID) AND apns_token = \(token) AND id <> \(deviceID)",
                logger: logger
            )
            try await connection.query(
                """
                UPDATE devices SET apns_token = \(token), apns_environment = COALESCE(apns_environment, 'production'),
                    token_valid = true, token_invalidated_at = NULL
                WHERE id = \(deviceID)
                """,
                logger: logger
            )
        }
        switch change.voipToken {
        case nil:
            break
        case .clear:
            try await connection.query("UPDATE devices SET voip_token = NULL WHERE id = \(deviceID)", logger: logger)
        case .set(let token):
            try await connection.query(
                "UPDATE devices SET voip_token = NULL WHERE app_id = \(appID) AND voip_token = \(token) AND id <> \(deviceID)",
                logger: logger
            )
            try await connection.query("UPDATE devices SET voip_token = \(token) WHERE id = \(deviceID)", logger: logger)
        }
        if let environment = change.apnsEnvironment {
            try await connection.query(
                "UPDATE devices SET apns_environment = \(environment.rawValue) WHERE id = \(deviceID)",
                logger: logger
            )
        }
    }

    func appID(appKey: String) async throws -> Int64? {
        guard Identifiers.isAppKey(appKey) else { return nil }
        let rows = try await client.query("SELECT id FROM apps WHERE app_key = \(appKey)", logger: logger)
        for try await id in rows.decode(Int64.self) { return id }
        return nil
    }

    static func device(appID: Int64, registrationID: String, on connection: PostgresConnection, logger: Logger) async throws -> DeviceRecord? {
        guard Identifiers.isRegistrationID(registrationID) else { return nil }
        let rows = try await connection.query(
            """
            SELECT d.registration_id, d.platform, d.alias, d.apns_token, d.apns_environment, d.voip_token, d.token_valid,
                d.created_at, d.updated_at,
                COALESCE((SELECT array_agg(t.tag ORDER BY t.tag) FROM device_tags t WHERE t.device_id = d.id), '{}')
            FROM devices d WHERE d.app_id = \(appID) AND d.registration_id = \(registrationID)
            """,
            logger: logger
        )
        for try await row in rows.decode((String, String, String?, String?, String?, String?, Bool, Date, Date, [String]).self) {
            return DeviceRecord(
                registrationID: row.0,
                platform: Platform(rawValue: row.1) ?? .linux,
                alias: row.2,
                tags: row.9,
                apnsToken: row.3,
                apnsEnvironment: row.4.flatMap(APNsEnvironment.init(rawValue:)),
                voipToken: row.5,
                tokenValid: row.6,
                createdAt: row.7,
                updatedAt: row.8
            )
        }
        return nil
    }

    static func deviceNotFound(_ registrationID: String) -> HeraldError {
        HeraldError(.deviceNotFound, "registration_id: no device \(registrationID) in this app")
    }
}
