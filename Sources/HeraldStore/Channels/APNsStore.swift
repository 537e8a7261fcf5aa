import Foundation
import HeraldCore
import PostgresNIO

/// What APNs, and the Live Activities it carries, read and write: an app's credentials
/// (sealed at rest, never returned by the API), the mark that APNs refused them, a token
/// APNs says is dead, the devices' ActivityKit tokens. Reached as ``APIStore/apns`` for
/// uploads (durable pool) and ``CenterStore/apns`` for sends (delivery pool), as
/// ``FCMStore`` is.
public struct APNsStore: StoreFacade {
    let core: StoreCore
}

extension APIStore {
    /// APNs credentials, as the API uploads and removes them.
    public var apns: APNsStore { APNsStore(core: core) }
}

extension CenterStore {
    /// What the APNs sends read and write.
    public var apns: APNsStore { APNsStore(core: core) }
}

extension APNsStore {
    /// Stores an app's APNs credentials, sealed; returns the updated app, or nil when there is no such app.
    public func setAPNsCredentials(_ credentials: APNsCredentials, appKey: String) async throws -> AppRecord? {
        guard Identifiers.isAppKey(appKey) else { return nil }
        let sealed = try sealer.seal(Array(try JSONEncoder().encode(credentials)), context: appKey)
        let summary = String(decoding: try APIStore.summaryEncoder.encode(credentials.summary), as: UTF8.self)
        let updated = try await client.query(
            """
            UPDATE apps SET apns_credentials = \(Data(sealed.combined)), apns_credentials_key = \(sealed.keyID),
                apns_summary = \(summary)::jsonb, apns_updated_at = now(),
                apns_broken_reason = NULL, apns_broken_at = NULL
            WHERE app_key = \(appKey) RETURNING id
            """,
            logger: logger
        ).count()
        return updated > 0 ? try await APIStore(core: core).app(appKey: appKey) : nil
    }

    /// Removes an app's APNs credentials. False when the app had none (or doesn't exist).
    public func deleteAPNsCredentials(appKey: String) async throws -> Bool {
        guard Identifiers.isAppKey(appKey) else { return false }
        return try await client.query(
            """
            UPDATE apps SET apns_credentials = NULL, apns_credentials_key = NULL, apns_summary = NULL, apns_updated_at = NULL,
                apns_broken_reason = NULL, apns_broken_at = NULL
            WHERE app_key = \(appKey) AND apns_credentials IS NOT NULL RETURNING id
            """,
            logger: logger
        ).count() > 0
    }

    /// An app's APNs credentials, unsealed (for the APNs provider; never for a response).
    public func apnsCredentials(appKey: String) async throws -> APNsCredentials? {
        guard Identifiers.isAppKey(appKey) else { return nil }
        let rows = try await client.query(
            "SELECT apns_credentials, apns_credentials_key FROM apps WHERE app_key = \(appKey) AND apns_credentials IS NOT NULL",
            logger: logger
        )
        for try await (combined, keyID) in rows.decode((Data, String).self) {
            let plaintext = try sealer.open(SealedSecret(keyID: keyID, combined: Array(combined)), context: appKey)
            return try JSONDecoder().decode(APNsCredentials.self, from: Data(plaintext))
        }
        return nil
    }

    /// APNs said a token is no longer valid. With a timestamp (Unregistered), a device
    /// that registered its token again after that moment stays valid. `voip`: the token is
    /// the device's VoIP token, which is removed (the device's APNs token stays valid);
    /// otherwise the device's tokens are marked invalid, since APNs' timestamp (when APNs
    /// gave one, else now). `event`: the message whose send found it out, when that message
    /// records events (a `token_invalidated` event is written in the same statement).
    public func invalidateToken(
        deviceID: Int64,
        token: String,
        since: Date?,
        voip: Bool = false,
        event: (messageID: Int64, reason: String)? = nil
    ) async throws {
        // An ActivityKit token APNs no longer takes goes (migration 0023), whether or not
        // the message records events.
        try await client.query(
            """
            DELETE FROM live_activity_tokens WHERE device_id = \(deviceID) AND token = \(token)
              AND (\(since)::timestamptz IS NULL OR updated_at <= \(since)::timestamptz)
            """,
            logger: logger
        )
        guard let event else {
            try await client.query(
                """
                UPDATE devices SET voip_token = CASE WHEN \(voip) THEN NULL ELSE voip_token END,
                    token_valid = token_valid AND \(voip),
                    token_invalidated_at = CASE WHEN \(voip) THEN token_invalidated_at ELSE COALESCE(\(since)::timestamptz, now()) END
                WHERE id = \(deviceID) AND (voip_token = \(token) OR (NOT \(voip) AND apns_token = \(token)))
                  AND (\(since)::timestamptz IS NULL OR updated_at <= \(since)::timestamptz)
                """,
                logger: logger
            )
            return
        }
        try await client.query(
            """
            WITH invalidated AS (
                UPDATE devices SET voip_token = CASE WHEN \(voip) THEN NULL ELSE voip_token END,
                    token_valid = token_valid AND \(voip),
                    token_invalidated_at = CASE WHEN \(voip) THEN token_invalidated_at ELSE COALESCE(\(since)::timestamptz, now()) END
                WHERE id = \(deviceID) AND (voip_token = \(token) OR (NOT \(voip) AND apns_token = \(token)))
                  AND (\(since)::timestamptz IS NULL OR updated_at <= \(since)::timestamptz)
                RETURNING id, app_id, registration_id, apns_token IS NOT DISTINCT FROM \(token) AS primary_token
            )
            INSERT INTO events (app_id, type, message_id, msg_id, device_id, registration_id, data)
            SELECT i.app_id, 'token_invalidated', m.id, m.msg_id, i.id, i.registration_id,
                   jsonb_build_object('reason', \(event.reason)::text, 'token', CASE WHEN i.primary_token THEN 'apns' ELSE 'voip' END)
            FROM invalidated i JOIN messages m ON m.id = \(event.messageID)
            """,
            logger: logger
        )
    }

    /// APNs refused the app's credentials: nothing goes to APNs for the app until new
    /// credentials are uploaded (which clears the mark).
    public func markAPNsCredentialsBroken(appID: Int64, reason: String) async throws {
        try await client.query(
            "UPDATE apps SET apns_broken_reason = \(reason), apns_broken_at = now() WHERE id = \(appID) AND apns_broken_reason IS NULL",
            logger: logger
        )
    }

    /// An app's APNs credentials for the provider, with when they changed and whether APNs
    /// refused them.
    public func apnsCredentials(appID: Int64) async throws -> (credentials: APNsCredentials, updatedAt: Date, brokenReason: String?)? {
        let rows = try await client.query(
            """
            SELECT app_key, apns_credentials, apns_credentials_key, apns_updated_at, apns_broken_reason FROM apps
            WHERE id = \(appID) AND apns_credentials IS NOT NULL
            """,
            logger: logger
        )
        for try await (appKey, combined, keyID, updatedAt, broken) in rows.decode((String, Data, String, Date, String?).self) {
            let plaintext = try sealer.open(SealedSecret(keyID: keyID, combined: Array(combined)), context: appKey)
            return (try JSONDecoder().decode(APNsCredentials.self, from: Data(plaintext)), updatedAt, broken)
        }
        return nil
    }

    /// The token each of `deviceIDs` holds for `target` (migration 0023); a device without
    /// one (removed since the fan-out) is left out.
    public func liveActivityTokens(deviceIDs: [Int64], target: LiveActivityTarget) async throws -> [Int64: String] {
        guard !deviceIDs.isEmpty else { return [:] }
        let rows = try await client.query(
            """
            SELECT device_id, token FROM live_activity_tokens
            WHERE device_id = ANY(\(deviceIDs)) AND kind = \(target.kind) AND key = \(target.key)
            """,
            logger: logger
        )
        var tokens: [Int64: String] = [:]
        for try await (deviceID, token) in rows.decode((Int64, String).self) { tokens[deviceID] = token }
        return tokens
    }
}
