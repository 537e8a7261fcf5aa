import Foundation
import HeraldCore
import PostgresNIO

/// Each app's SMS provider, on the durable pool (``APIStore/smsProviders``).
public struct SMSProviderStore: StoreFacade {
    let core: StoreCore
}

extension APIStore {
    /// Each app's SMS provider, on the durable pool.
    public var smsProviders: SMSProviderStore { SMSProviderStore(core: core) }
}

/// An app's SMS provider (migration 0023), sealed at rest like the APNs credentials.
extension SMSProviderStore {
    /// Stores the app's HTTP SMS provider; false when there is no such app.
    public func set(_ provider: SMSHTTPProviderConfiguration, appKey: String) async throws -> Bool {
        guard Identifiers.isAppKey(appKey) else { return false }
        let sealed = try sealer.seal(Array(try JSONEncoder().encode(provider)), context: "sms:" + appKey)
        return try await client.query(
            """
            UPDATE apps SET sms_provider = \(Data(sealed.combined)), sms_provider_key = \(sealed.keyID), sms_provider_updated_at = now()
            WHERE app_key = \(appKey) RETURNING id
            """,
            logger: logger
        ).count() > 0
    }

    /// The app's provider, unsealed (for its owner's summary, never with the secret in an
    /// answer), and when it was set; nil when the app has none.
    public func find(appKey: String) async throws -> (provider: SMSHTTPProviderConfiguration, updatedAt: Date)? {
        guard Identifiers.isAppKey(appKey) else { return nil }
        let rows = try await client.query(
            "SELECT sms_provider, sms_provider_key, sms_provider_updated_at FROM apps WHERE app_key = \(appKey) AND sms_provider IS NOT NULL",
            logger: logger
        )
        for try await (combined, keyID, updatedAt) in rows.decode((Data, String, Date).self) {
            let plaintext = try sealer.open(SealedSecret(keyID: keyID, combined: Array(combined)), context: "sms:" + appKey)
            return (try JSONDecoder().decode(SMSHTTPProviderConfiguration.self, from: Data(plaintext)), updatedAt)
        }
        return nil
    }

    /// Removes the app's provider; false when it had none.
    public func delete(appKey: String) async throws -> Bool {
        guard Identifiers.isAppKey(appKey) else { return false }
        return try await client.query(
            """
            UPDATE apps SET sms_provider = NULL, sms_provider_key = NULL, sms_provider_updated_at = NULL
            WHERE app_key = \(appKey) AND sms_provider IS NOT NULL RETURNING id
            """,
            logger: logger
        ).count() > 0
    }
}
