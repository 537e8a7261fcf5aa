import HeraldCore
import PostgresNIO

extension DeviceStore {
    /// Registration ids of the app's devices with this alias; only those of `platforms`
    /// (raw values) when given.
    public func registrationIDs(appID: Int64, alias: String, platforms: [String]? = nil) async throws -> [String] {
        let rows = try await client.query(
            """
            SELECT registration_id FROM devices
            WHERE app_id = \(appID) AND alias = \(alias) AND (\(platforms)::text[] IS NULL OR platform = ANY(\(platforms)::text[]))
            ORDER BY registration_id
            """,
            logger: logger
        )
        var ids: [String] = []
        for try await id in rows.decode(String.self) { ids.append(id) }
        return ids
    }

    /// Clears the alias from every device of the app that has it (of `platforms`, raw
    /// values, when given); returns how many had it.
    @discardableResult
    public func deleteAlias(appID: Int64, alias: String, platforms: [String]? = nil) async throws -> Int {
        try await client.query(
            """
            UPDATE devices SET alias = NULL, updated_at = now()
            WHERE app_id = \(appID) AND alias = \(alias) AND (\(platforms)::text[] IS NULL OR platform = ANY(\(platforms)::text[]))
            RETURNING id
            """,
            logger: logger
        ).count()
    }

    /// Takes the alias from these devices of the app; returns how many had it. Every id
    /// must name a device of the app (otherwise nothing changes).
    public func removeAlias(appID: Int64, alias: String, registrationIDs: [String]) async throws -> Int {
        try await transaction { connection in
            let rows = try await connection.query(
                """
                SELECT registration_id FROM devices
                WHERE app_id = \(appID) AND registration_id = ANY(\(registrationIDs)) ORDER BY id FOR UPDATE
                """,
                logger: logger
            )
            var known: Set<String> = []
            for try await id in rows.decode(String.self) { known.insert(id) }
            let unknown = registrationIDs.filter { !known.contains($0) }.sorted()
            if !unknown.isEmpty {
                let shown = unknown.prefix(5).joined(separator: ", ") + (unknown.count > 5 ? ", ..." : "")
                throw HeraldError(.deviceNotFound, "registration_ids.remove: \(unknown.count) not in this app: \(shown)")
            }
            return try await connection.query(
                """
                UPDATE devices SET alias = NULL, updated_at = now()
                WHERE app_id = \(appID) AND alias = \(alias) AND registration_id = ANY(\(registrationIDs)) RETURNING id
                """,
                logger: logger
            ).count()
        }
    }
}
