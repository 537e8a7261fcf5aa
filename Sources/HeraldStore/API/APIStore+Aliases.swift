import HeraldCore
import PostgresNIO

extension APIStore {
    /// Registration ids of the app's devices with this alias.
    public func devices(appID: Int64, alias: String) async throws -> [String] {
        let rows = try await client.query(
            "SELECT registration_id FROM devices WHERE app_id = \(appID) AND alias = \(alias) ORDER BY registration_id",
            logger: logger
        )
        var ids: [String] = []
        for try await id in rows.decode(String.self) { ids.append(id) }
        return ids
    }

    /// Clears the alias from every device of the app that has it; returns how many had it.
    @discardableResult
    public func deleteAlias(appID: Int64, alias: String) async throws -> Int {
        try await client.query(
            "UPDATE devices SET alias = NULL, updated_at = now() WHERE app_id = \(appID) AND alias = \(alias) RETURNING id",
            logger: logger
        ).count()
    }
}
