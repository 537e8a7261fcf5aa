import Foundation
import HeraldCore
import PostgresNIO

/// API keys, per app or for the administration, on the durable pool (``APIStore/keys``).
public struct KeyStore: StoreFacade {
    let core: StoreCore
}

extension APIStore {
    /// API keys, per app or for the administration, on the durable pool.
    public var keys: KeyStore { KeyStore(core: core) }
}

/// API keys (migration 0033): an app's many scoped keys, and the admin API's.
extension KeyStore {
    static let keyColumns =
        """
        k.key_id, k.app_id, k.name, k.scopes, k.allowed_ranges, k.expires_at, k.created_at, k.rotated_from, k.revoked_at,
        k.last_used_at, host(k.last_used_from)
        """

    typealias KeyRow = (String, Int64?, String, [String], [String]?, Date?, Date, String?, Date?, Date?, String?)

    static func key(_ row: KeyRow) -> APIKeyRecord {
        APIKeyRecord(
            keyID: row.0,
            appID: row.1,
            name: row.2,
            scopes: row.3.compactMap(Scope.init(rawValue:)).sorted(),
            allowedRanges: row.4.map { $0.compactMap { IPRange($0) } },
            expiresAt: row.5,
            createdAt: row.6,
            rotatedFrom: row.7,
            revokedAt: row.8,
            lastUsedAt: row.9,
            lastUsedFrom: row.10
        )
    }

    /// Makes a key for the app (`appID`), or an admin key (nil); its secret is returned
    /// once and stored hashed.
    public func create(appID: Int64?, _ spec: APIKeySpec, rotatedFrom: String? = nil) async throws -> CreatedAPIKey {
        let (keyID, secret) = APIKeyText.make(admin: appID == nil)
        let rows = try await client.query(
            """
            INSERT INTO api_keys AS k (app_id, key_id, name, secret_hash, scopes, allowed_ranges, expires_at, rotated_from)
            VALUES (\(appID), \(keyID), \(spec.name), \(Data(SecretHash.digest(secret))), \(spec.scopes.map(\.rawValue)),
                    \(spec.allowedRanges?.map(\.description)), \(spec.expiresAt), \(rotatedFrom))
            RETURNING \(unescaped: Self.keyColumns)
            """,
            logger: logger
        )
        for try await row in rows.decode(KeyRow.self) { return CreatedAPIKey(key: Self.key(row), secret: secret) }
        throw HeraldError(.internalError, "the key was not created")
    }

    /// The app's keys (nil: the admin keys), oldest first, revoked ones included.
    public func list(appID: Int64?) async throws -> [APIKeyRecord] {
        let rows = try await client.query(
            """
            SELECT \(unescaped: Self.keyColumns) FROM api_keys k
            WHERE k.app_id IS NOT DISTINCT FROM \(appID) ORDER BY k.created_at, k.id
            """,
            logger: logger
        )
        var keys: [APIKeyRecord] = []
        for try await row in rows.decode(KeyRow.self) { keys.append(Self.key(row)) }
        return keys
    }

    /// One key of the app's (nil: an admin key), or nil.
    public func find(appID: Int64?, keyID: String) async throws -> APIKeyRecord? {
        let rows = try await client.query(
            "SELECT \(unescaped: Self.keyColumns) FROM api_keys k WHERE k.app_id IS NOT DISTINCT FROM \(appID) AND k.key_id = \(keyID)",
            logger: logger
        )
        for try await row in rows.decode(KeyRow.self) { return Self.key(row) }
        return nil
    }

    /// Revokes a key of the app's (nil: an admin key); it stops authenticating at once on
    /// this node. Returns the key, nil when there is none.
    public func revoke(appID: Int64?, keyID: String) async throws -> APIKeyRecord? {
        let rows = try await client.query(
            """
            UPDATE api_keys k SET revoked_at = COALESCE(k.revoked_at, now())
            WHERE k.app_id IS NOT DISTINCT FROM \(appID) AND k.key_id = \(keyID)
            RETURNING \(unescaped: Self.keyColumns)
            """,
            logger: logger
        )
        for try await row in rows.decode(KeyRow.self) { return Self.key(row) }
        return nil
    }

    /// The key whose secret this is, with its app when it is an app's, or nil: no such
    /// key, a wrong secret. Revoked and expired keys are returned (the caller says why it
    /// refuses them).
    public func authenticate(secret: String) async throws -> (key: APIKeyRecord, app: AppRecord?)? {
        guard let keyID = APIKeyText.keyID(of: secret) else { return nil }
        let rows = try await client.query(
            """
            SELECT \(unescaped: Self.keyColumns), k.secret_hash, a.app_key
            FROM api_keys k LEFT JOIN apps a ON a.id = k.app_id WHERE k.key_id = \(keyID)
            """,
            logger: logger
        )
        for try await row in rows {
            let columns = row.makeRandomAccess()
            guard SecretHash.matches(secret, stored: Array(try columns[11].decode(Data.self))) else { return nil }
            let key = Self.key(
                (
                    try columns[0].decode(String.self), try columns[1].decode(Int64?.self), try columns[2].decode(String.self),
                    try columns[3].decode([String].self), try columns[4].decode([String]?.self), try columns[5].decode(Date?.self),
                    try columns[6].decode(Date.self), try columns[7].decode(String?.self), try columns[8].decode(Date?.self),
                    try columns[9].decode(Date?.self), try columns[10].decode(String?.self)
                )
            )
            guard let appKey = try columns[12].decode(String?.self) else { return (key, nil) }
            guard let app = try await APIStore(core: core).app(appKey: appKey) else { return nil }
            return (key, app)
        }
        return nil
    }

    /// Records that a key was used now from `address`: at most once a minute per key, so a
    /// busy key costs no write per request.
    public func touch(_ keyID: String, from address: String?) async throws {
        try await client.query(
            """
            UPDATE api_keys SET last_used_at = now(), last_used_from = \(address)::inet
            WHERE key_id = \(keyID) AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
            """,
            logger: logger
        )
    }

    /// Switches the app's `app_key:master_secret` on or off. False when there is no app.
    public func setMasterSecretEnabled(_ enabled: Bool, appID: Int64) async throws -> Bool {
        try await client.query(
            "UPDATE apps SET master_secret_enabled = \(enabled) WHERE id = \(appID) RETURNING id",
            logger: logger
        ).count() > 0
    }

    /// Whether the app's master secret authenticates.
    public func masterSecretEnabled(appID: Int64) async throws -> Bool {
        let rows = try await client.query("SELECT master_secret_enabled FROM apps WHERE id = \(appID)", logger: logger)
        for try await enabled in rows.decode(Bool.self) { return enabled }
        return false
    }
}
