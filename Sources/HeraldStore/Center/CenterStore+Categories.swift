import HeraldCore
import PostgresNIO

extension CenterStore {
    /// A device reported the configuration version of a category it holds (the SDK's
    /// `category_version` event). A category the app doesn't define is ignored; a report of
    /// an older version than the one recorded replaces it (the device says what it holds).
    public func recordCategoryVersion(appID: Int64, deviceID: Int64, identifier: String, version: Int64) async throws {
        guard identifier.utf8.count <= NotificationCategory.maxIdentifierBytes, version > 0 else { return }
        try await client.query(
            """
            INSERT INTO category_device_versions (app_id, identifier, device_id, version, reported_at)
            SELECT c.app_id, c.identifier, \(deviceID), \(version), now() FROM notification_categories c
            WHERE c.app_id = \(appID) AND c.identifier = \(identifier)
            ON CONFLICT (app_id, identifier, device_id) DO UPDATE SET version = EXCLUDED.version, reported_at = EXCLUDED.reported_at
            """,
            logger: logger
        )
    }
}

extension CenterStore {
    /// The languages the devices reported, by device id (devices without one left out):
    /// read only for pushes with content per language.
    public func deviceLanguages(_ deviceIDs: [Int64]) async throws -> [Int64: String] {
        guard !deviceIDs.isEmpty else { return [:] }
        let rows = try await client.query(
            "SELECT id, language FROM devices WHERE id = ANY(\(deviceIDs)) AND language IS NOT NULL",
            logger: logger
        )
        var languages: [Int64: String] = [:]
        for try await (id, language) in rows.decode((Int64, String).self) { languages[id] = language }
        return languages
    }
}
