import Foundation
import HeraldCore
import PostgresNIO

extension APIStore {
    /// Creates an app with a fresh app key and master secret, or with `credentials` an
    /// app moving from JPush already has (shapes checked by the caller): its servers keep
    /// authenticating with them. The secret is stored hashed either way.
    /// - Throws: `conflict` when an app already has that key.
    public func createApp(name: String, credentials: (appKey: String, masterSecret: String)? = nil) async throws -> CreatedApp {
        let appKey = credentials?.appKey ?? Identifiers.newAppKey()
        let secret = credentials?.masterSecret ?? Identifiers.newMasterSecret()
        do {
            let rows = try await client.query(
                """
                INSERT INTO apps (app_key, name, master_secret_hash)
                VALUES (\(appKey), \(name), \(Data(SecretHash.digest(secret))))
                RETURNING id, created_at
                """,
                logger: logger
            )
            for try await (id, createdAt) in rows.decode((Int64, Date).self) {
                return CreatedApp(app: AppRecord(id: id, appKey: appKey, name: name, createdAt: createdAt), masterSecret: secret)
            }
        } catch  where Self.sqlState(error) == "23505" {
            throw HeraldError(.conflict, "app_key: an app with this key already exists")
        }
        throw HeraldError(.internalError, "app was not created")
    }

    /// Every app, oldest first.
    public func listApps() async throws -> [AppRecord] {
        let rows = try await client.query(
            "SELECT \(unescaped: Self.appColumns) FROM apps ORDER BY id",
            logger: logger
        )
        var apps: [AppRecord] = []
        for try await row in rows {
            apps.append(Self.app(try Self.appRow(row.makeRandomAccess())))
        }
        return apps
    }

    /// The app with `appKey`.
    public func app(appKey: String) async throws -> AppRecord? {
        guard Identifiers.isAppKey(appKey) else { return nil }
        let rows = try await client.query(
            "SELECT \(unescaped: Self.appColumns) FROM apps WHERE app_key = \(appKey)",
            logger: logger
        )
        for try await row in rows {
            return Self.app(try Self.appRow(row.makeRandomAccess()))
        }
        return nil
    }

    /// Deletes an app with all its devices, aliases and tags. False when there was none.
    public func deleteApp(appKey: String) async throws -> Bool {
        guard Identifiers.isAppKey(appKey) else { return false }
        return try await client.query("DELETE FROM apps WHERE app_key = \(appKey) RETURNING id", logger: logger).count() > 0
    }

    /// The app whose key and master secret these are, or nil (also when the app has
    /// switched its master secret off: ``setMasterSecretEnabled(_:appID:)``).
    public func authenticateApp(appKey: String, masterSecret: String) async throws -> AppRecord? {
        guard Identifiers.isAppKey(appKey) else { return nil }
        let rows = try await client.query(
            """
            SELECT \(unescaped: Self.appColumns), master_secret_hash FROM apps WHERE app_key = \(appKey) AND master_secret_enabled
            """,
            logger: logger
        )
        for try await row in rows {
            let columns = row.makeRandomAccess()
            guard SecretHash.matches(masterSecret, stored: Array(try columns[13].decode(Data.self))) else { return nil }
            return Self.app(try Self.appRow(columns))
        }
        return nil
    }

    static let summaryEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    /// The columns of an ``AppRecord``, in the order of ``AppRow``.
    static let appColumns =
        """
        id, app_key, name, created_at, apns_summary::text, apns_updated_at, apns_broken_reason, rate_limit_per_minute,
        extract(epoch FROM quiet_hours_start)::integer, extract(epoch FROM quiet_hours_end)::integer, quiet_hours_action, daily_cap,
        time_zone
        """

    typealias AppRow = (Int64, String, String, Date, String?, Date?, String?, Int32?, Int32?, Int32?, String?, Int32?, String)

    /// The ``appColumns`` of a row (more than a tuple decode takes).
    static func appRow(_ row: PostgresRandomAccessRow) throws -> AppRow {
        (
            try row[0].decode(Int64.self), try row[1].decode(String.self), try row[2].decode(String.self), try row[3].decode(Date.self),
            try row[4].decode(String?.self), try row[5].decode(Date?.self), try row[6].decode(String?.self),
            try row[7].decode(Int32?.self), try row[8].decode(Int32?.self), try row[9].decode(Int32?.self),
            try row[10].decode(String?.self), try row[11].decode(Int32?.self), try row[12].decode(String.self)
        )
    }

    static func app(_ row: AppRow) -> AppRecord {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let summary = row.4.flatMap { try? decoder.decode(APNsCredentialsSummary.self, from: Data($0.utf8)) }
        return AppRecord(
            id: row.0,
            appKey: row.1,
            name: row.2,
            createdAt: row.3,
            apns: summary,
            apnsUpdatedAt: row.5,
            apnsProblem: row.6,
            rateLimitPerMinute: row.7.map(Int.init),
            controls: DeliveryControls(
                quietHours: row.8.flatMap { start in
                    row.9.flatMap { end in
                        row.10.flatMap(QuietHours.Action.init(rawValue:)).map { QuietHours(start: Int(start), end: Int(end), action: $0) }
                    }
                },
                dailyCap: row.11.map(Int.init)
            ),
            timeZone: row.12
        )
    }
}
