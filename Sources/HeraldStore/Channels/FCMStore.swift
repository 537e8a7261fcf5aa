import Foundation
import HeraldCore
import Logging
import PostgresNIO

/// An app's FCM credentials and its devices' FCM tokens: what the API writes and reads of
/// them (``APIStore/fcm``), and what the FCM channel needs (``CenterStore/fcm``). The
/// service account is sealed at rest like APNs credentials (``CredentialSealer``, with the
/// app key as context) and never read back into a response; the summary is what
/// operators see.
public struct FCMStore: StoreFacade {
    let core: StoreCore

    static let context = "fcm:"

    /// Stores an app's service account, sealed, and clears an earlier refusal. False when
    /// there is no such app.
    public func setCredentials(_ account: FCMServiceAccount, appKey: String) async throws -> Bool {
        guard Identifiers.isAppKey(appKey) else { return false }
        let sealed = try sealer.seal(Array(try JSONEncoder().encode(account)), context: Self.context + appKey)
        let summary = String(decoding: try JSONEncoder().encode(account.summary), as: UTF8.self)
        return try await client.query(
            """
            UPDATE apps SET fcm_credentials = \(Data(sealed.combined)), fcm_credentials_key = \(sealed.keyID),
                fcm_summary = \(summary)::jsonb, fcm_updated_at = now(), fcm_broken_reason = NULL, fcm_broken_at = NULL
            WHERE app_key = \(appKey) RETURNING id
            """,
            logger: logger
        ).count() > 0
    }

    /// Removes an app's service account. False when it had none (or doesn't exist).
    public func deleteCredentials(appKey: String) async throws -> Bool {
        guard Identifiers.isAppKey(appKey) else { return false }
        return try await client.query(
            """
            UPDATE apps SET fcm_credentials = NULL, fcm_credentials_key = NULL, fcm_summary = NULL, fcm_updated_at = NULL,
                fcm_broken_reason = NULL, fcm_broken_at = NULL
            WHERE app_key = \(appKey) AND fcm_credentials IS NOT NULL RETURNING id
            """,
            logger: logger
        ).count() > 0
    }

    /// What operators see of an app's FCM credentials: the summary, when they were set,
    /// and FCM's refusal if it refused them. Nil when the app has none.
    public func credentials(appKey: String) async throws -> FCMCredentialsState? {
        guard Identifiers.isAppKey(appKey) else { return nil }
        let rows = try await client.query(
            "SELECT fcm_summary::text, fcm_updated_at, fcm_broken_reason FROM apps WHERE app_key = \(appKey) AND fcm_credentials IS NOT NULL",
            logger: logger
        )
        for try await (summary, updatedAt, broken) in rows.decode((String, Date, String?).self) {
            return FCMCredentialsState(
                summary: try JSONDecoder().decode(FCMCredentialsSummary.self, from: Data(summary.utf8)),
                updatedAt: updatedAt,
                brokenReason: broken
            )
        }
        return nil
    }

    /// An app's service account, unsealed (for the FCM channel; never for a response), and
    /// why FCM refused it when it did.
    public func serviceAccount(appID: Int64) async throws -> (account: FCMServiceAccount, brokenReason: String?)? {
        let rows = try await client.query(
            "SELECT app_key, fcm_credentials, fcm_credentials_key, fcm_broken_reason FROM apps WHERE id = \(appID) AND fcm_credentials IS NOT NULL",
            logger: logger
        )
        for try await (appKey, combined, keyID, broken) in rows.decode((String, Data, String, String?).self) {
            let plaintext = try sealer.open(SealedSecret(keyID: keyID, combined: Array(combined)), context: Self.context + appKey)
            return (try JSONDecoder().decode(FCMServiceAccount.self, from: Data(plaintext)), broken)
        }
        return nil
    }

    /// FCM refused the app's credentials: nothing goes to FCM for the app until new ones
    /// are uploaded (which clears the mark).
    public func markBroken(appID: Int64, reason: String) async throws {
        try await client.query(
            "UPDATE apps SET fcm_broken_reason = \(reason), fcm_broken_at = now() WHERE id = \(appID) AND fcm_broken_reason IS NULL",
            logger: logger
        )
    }

    /// FCM said the token is dead: it leaves the device (if it is still the device's, not
    /// one registered since), and the copy's message gets a `token_invalidated` event
    /// (`{"reason": …, "token": "fcm"}`) when its app records events or it has a callback.
    public func removeToken(deviceID: Int64, token: String, reason: String, messageID: Int64?) async throws {
        let recording = Array(core.eventApps.current.all)
        try await client.query(
            """
            WITH removed AS (
                UPDATE devices SET fcm_token = NULL, updated_at = now()
                WHERE id = \(deviceID) AND fcm_token = \(token)
                RETURNING id, app_id, registration_id
            )
            INSERT INTO events (app_id, type, message_id, msg_id, device_id, registration_id, data)
            SELECT r.app_id, 'token_invalidated', m.id, m.msg_id, r.id, r.registration_id,
                   jsonb_build_object('reason', \(reason)::text, 'token', 'fcm')
            FROM removed r JOIN messages m ON m.id = \(messageID)
            WHERE r.app_id = ANY(\(recording)::bigint[]) OR EXISTS (SELECT 1 FROM message_callbacks c WHERE c.message_id = m.id)
            """,
            logger: logger
        )
    }
}

/// What operators see of an app's FCM credentials.
public struct FCMCredentialsState: Sendable, Hashable {
    public var summary: FCMCredentialsSummary
    public var updatedAt: Date
    /// Why FCM refused them, when it did (nothing is sent until new ones are uploaded).
    public var brokenReason: String?
}

extension APIStore {
    /// FCM credentials and tokens, on the durable pool.
    public var fcm: FCMStore { FCMStore(core: core) }
}

extension CenterStore {
    /// What the FCM channel reads and writes, on the delivery pool.
    public var fcm: FCMStore { FCMStore(core: core) }
}
