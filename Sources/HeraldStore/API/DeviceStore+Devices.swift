import Foundation
import HeraldCore
import PostgresNIO

extension DeviceStore {
    /// Registers an installation of the app and gives it a new device secret.
    ///
    /// A token belongs to the installation that registered it last, and knowing a token
    /// proves nothing: a registration that carries a token another device of the app holds
    /// gets the existing registration back only with `proof`, that registration's current
    /// secret. Without it a new registration is made and the token moves to it; the other
    /// device keeps its registration id, secret, alias and tags, but no longer that token.
    /// - Parameter proof: the registration id and device secret the installation holds, if
    ///   any: that registration is updated and kept (with a new secret) instead of a new one.
    /// - Throws: `unauthorized` when `proof` doesn't authenticate a device of this app.
    public func register(
        appKey: String,
        _ registration: DeviceRegistration,
        proof: (registrationID: String, deviceSecret: String)? = nil
    ) async throws -> RegisteredDevice {
        guard let appID = try await appID(appKey: appKey) else {
            throw HeraldError(.appNotFound, "app_key: no app with this key")
        }
        let secret = Identifiers.newDeviceSecret()
        let secretHash = Data(SecretHash.digest(secret))
        let platform = registration.platform.rawValue
        let environment = registration.apnsToken == nil ? nil : (registration.apnsEnvironment ?? .production).rawValue
        do {
            return try await transaction { connection in
                var kept: Int64?
                if let proof {
                    kept = try await provenDevice(appID: appID, proof, on: connection)
                }
                // The tokens leave whichever other device of the app holds them.
                if let token = registration.apnsToken {
                    try await connection.query(
                        """
                        UPDATE devices SET apns_token = NULL, apns_environment = NULL, updated_at = now()
                        WHERE app_id = \(appID) AND apns_token = \(token) AND id IS DISTINCT FROM \(kept)
                        """,
                        logger: logger
                    )
                }
                if let token = registration.voipToken {
                    try await connection.query(
                        """
                        UPDATE devices SET voip_token = NULL, updated_at = now()
                        WHERE app_id = \(appID) AND voip_token = \(token) AND id IS DISTINCT FROM \(kept)
                        """,
                        logger: logger
                    )
                }
                if let token = registration.fcmToken {
                    try await connection.query(
                        """
                        UPDATE devices SET fcm_token = NULL, updated_at = now()
                        WHERE app_id = \(appID) AND fcm_token = \(token) AND id IS DISTINCT FROM \(kept)
                        """,
                        logger: logger
                    )
                }
                if let kept, let proof {
                    try await connection.query(
                        """
                        UPDATE devices SET platform = \(platform), secret_hash = \(secretHash),
                            apns_environment = COALESCE(\(environment), apns_environment),
                            voip_token = COALESCE(\(registration.voipToken), voip_token),
                            apns_token = COALESCE(\(registration.apnsToken), apns_token),
                            fcm_token = COALESCE(\(registration.fcmToken), fcm_token),
                            time_zone = COALESCE(\(registration.timeZone), time_zone),
                            language = COALESCE(\(registration.language), language),
                            token_valid = true, token_invalidated_at = NULL, updated_at = now()
                        WHERE id = \(kept)
                        """,
                        logger: logger
                    )
                    return RegisteredDevice(registrationID: proof.registrationID, deviceSecret: secret, created: false)
                }
                let newID = Identifiers.newRegistrationID()
                try await connection.query(
                    """
                    INSERT INTO devices (app_id, registration_id, platform, secret_hash, apns_token, apns_environment, voip_token, time_zone,
                                         language, fcm_token)
                    VALUES (\(appID), \(newID), \(platform), \(secretHash), \(registration.apnsToken), \(environment), \(registration.voipToken),
                            \(registration.timeZone), \(registration.language), \(registration.fcmToken))
                    """,
                    logger: logger
                )
                return RegisteredDevice(registrationID: newID, deviceSecret: secret, created: true)
            }
        } catch  where Self.sqlState(error) == "23505" {
            // Another registration of the same token committed between our update and insert.
            throw HeraldError(.conflict, "a token: being registered by another request at the same time; try again")
        }
    }

    /// The id of the device `proof` authenticates in this app, locked for the registration.
    ///
    /// A device imported without a secret (see ``importDevices(appID:_:)``) is claimed by
    /// the first proof that names it with an empty secret; the registration then gives it
    /// one, and from then on only that secret proves it.
    private func provenDevice(
        appID: Int64,
        _ proof: (registrationID: String, deviceSecret: String),
        on connection: PostgresConnection
    ) async throws -> Int64 {
        if Identifiers.isRegistrationID(proof.registrationID) {
            let rows = try await connection.query(
                """
                SELECT id, secret_hash FROM devices
                WHERE app_id = \(appID) AND registration_id = \(proof.registrationID) FOR UPDATE
                """,
                logger: logger
            )
            for try await (id, hash) in rows.decode((Int64, Data?).self) {
                if let hash, SecretHash.matches(proof.deviceSecret, stored: Array(hash)) { return id }
                if hash == nil, proof.deviceSecret.isEmpty { return id }
            }
        }
        throw HeraldError(.unauthorized, "Authorization: wrong registration_id or device_secret for this app")
    }

    /// The device these credentials belong to, or nil.
    public func authenticate(registrationID: String, deviceSecret: String) async throws -> Principal? {
        guard Identifiers.isRegistrationID(registrationID) else { return nil }
        let rows = try await client.query(
            "SELECT app_id, secret_hash FROM devices WHERE registration_id = \(registrationID)",
            logger: logger
        )
        for try await (appID, hash) in rows.decode((Int64, Data?).self) {
            // An imported device nobody has claimed yet has no secret: nothing proves it.
            guard let hash else { return nil }
            return SecretHash.matches(deviceSecret, stored: Array(hash)) ? .device(appID: appID, registrationID: registrationID) : nil
        }
        return nil
    }

    /// A device of the app, with its tags.
    public func find(appID: Int64, registrationID: String) async throws -> DeviceRecord? {
        try await client.withConnection { connection in
            try await Self.device(appID: appID, registrationID: registrationID, on: connection, sealer: sealer, logger: logger)
        }
    }

    /// Applies `change` to a device in one transaction; returns the device afterwards.
    public func update(appID: Int64, registrationID: String, _ change: DeviceChange) async throws -> DeviceRecord {
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
            switch change.mobile {
            case nil: break
            case .clear:
                try await connection.query(
                    "UPDATE devices SET mobile = NULL, mobile_sealed = NULL, mobile_key = NULL WHERE id = \(deviceID)",
                    logger: logger
                )
            case .set(let mobile):
                let sealed = try MobileSealing.seal(mobile, appID: appID, sealer: sealer)
                try await connection.query(
                    "UPDATE devices SET mobile = NULL, mobile_sealed = \(Data(sealed.combined)), mobile_key = \(sealed.keyID) WHERE id = \(deviceID)",
                    logger: logger
                )
            }
            switch change.timeZone {
            case nil: break
            case .clear: try await connection.query("UPDATE devices SET time_zone = NULL WHERE id = \(deviceID)", logger: logger)
            case .set(let zone): try await connection.query("UPDATE devices SET time_zone = \(zone) WHERE id = \(deviceID)", logger: logger)
            }
            switch change.language {
            case nil: break
            case .clear: try await connection.query("UPDATE devices SET language = NULL WHERE id = \(deviceID)", logger: logger)
            case .set(let tag): try await connection.query("UPDATE devices SET language = \(tag) WHERE id = \(deviceID)", logger: logger)
            }
            if let badge = change.badge {
                try await connection.query("UPDATE devices SET badge = \(Int32(clamping: badge)) WHERE id = \(deviceID)", logger: logger)
            }
            try await connection.query("UPDATE devices SET updated_at = now() WHERE id = \(deviceID)", logger: logger)

            guard let device = try await Self.device(appID: appID, registrationID: registrationID, on: connection, sealer: sealer, logger: logger)
            else {
                throw Self.deviceNotFound(registrationID)
            }
            return device
        }
    }

    /// Deletes a device. False when the app has no such device.
    public func delete(appID: Int64, registrationID: String) async throws -> Bool {
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
        switch change.fcmToken {
        case nil:
            break
        case .clear:
            try await connection.query("UPDATE devices SET fcm_token = NULL WHERE id = \(deviceID)", logger: logger)
        case .set(let token):
            // As an APNs token: it belongs to the installation that registered it last.
            try await connection.query(
                "UPDATE devices SET fcm_token = NULL WHERE app_id = \(appID) AND fcm_token = \(token) AND id <> \(deviceID)",
                logger: logger
            )
            try await connection.query("UPDATE devices SET fcm_token = \(token) WHERE id = \(deviceID)", logger: logger)
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

    static func device(
        appID: Int64,
        registrationID: String,
        on connection: PostgresConnection,
        sealer: CredentialSealer,
        logger: Logger
    ) async throws -> DeviceRecord? {
        guard Identifiers.isRegistrationID(registrationID) else { return nil }
        let rows = try await connection.query(
            """
            SELECT d.registration_id, d.platform, d.alias, d.apns_token, d.apns_environment, d.voip_token, d.token_valid,
                d.created_at, d.updated_at,
                COALESCE((SELECT array_agg(t.tag ORDER BY t.tag) FROM device_tags t WHERE t.device_id = d.id), '{}'),
                n.node_id, CASE WHEN n.node_id IS NOT NULL THEN now() ELSE s.last_seen_at END, d.mobile, d.time_zone,
                d.mobile_sealed, d.mobile_key, d.language, d.badge, d.fcm_token
            FROM devices d
            LEFT JOIN device_sessions s ON s.device_id = d.id
            LEFT JOIN nodes n ON n.node_id = s.node_id
            WHERE d.app_id = \(appID) AND d.registration_id = \(registrationID)
            """,
            logger: logger
        )
        for try await row in rows.decode(
            (
                String, String, String?, String?, String?, String?, Bool, Date, Date, [String], String?, Date?, String?, String?, Data?, String?,
                String?, Int32, String?
            )
            .self
        ) {
            return DeviceRecord(
                registrationID: row.0,
                platform: Platform(rawValue: row.1) ?? .linux,
                alias: row.2,
                tags: row.9,
                apnsToken: row.3,
                apnsEnvironment: row.4.flatMap(APNsEnvironment.init(rawValue:)),
                voipToken: row.5,
                tokenValid: row.6,
                fcmToken: row.18,
                // A number that doesn't open (sealed for another app, or under another key)
                // is no number.
                mobile: row.12 ?? (try? MobileSealing.open(row.14, keyID: row.15, appID: appID, sealer: sealer)) ?? nil,
                timeZone: row.13,
                language: row.16,
                badge: Int(row.17),
                createdAt: row.7,
                updatedAt: row.8,
                node: row.10,
                lastOnlineAt: row.11
            )
        }
        return nil
    }

    static func deviceNotFound(_ registrationID: String) -> HeraldError {
        HeraldError(.deviceNotFound, "registration_id: no device \(registrationID) in this app")
    }
}
