import Foundation
import HeraldCore
import PostgresNIO

/// Notification categories, per app, on the durable pool (``APIStore/categories``).
public struct CategoryStore: StoreFacade {
    let core: StoreCore
}

extension APIStore {
    /// Notification categories, per app, on the durable pool.
    public var categories: CategoryStore { CategoryStore(core: core) }
}

/// A category as stored: its definition, its version, when it was made and changed.
public struct CategoryRecord: Sendable, Hashable {
    public var category: NotificationCategory
    public var version: Int64
    public var createdAt: Date
    public var updatedAt: Date

    /// What devices get (`notification_config`).
    public var config: JSONValue { category.config(version: version) }

    /// The category as the API answers it: its definition, `version`, `created_at`,
    /// `updated_at`.
    public var json: JSONValue {
        guard case .object(var fields) = config else { return config }
        fields["created_at"] = .string(ISO8601DateFormatter().string(from: createdAt))
        fields["updated_at"] = .string(ISO8601DateFormatter().string(from: updatedAt))
        return .object(fields)
    }
}

/// Notification categories (`/v3/categories`), per app.
extension CategoryStore {
    /// Defines a category; nil when the app has one with this identifier already.
    public func create(appID: Int64, _ category: NotificationCategory) async throws -> CategoryRecord? {
        try await transaction { connection in
            let counted = try await connection.query(
                "SELECT count(*) FROM notification_categories WHERE app_id = \(appID)",
                logger: logger
            )
            for try await count in counted.decode(Int64.self) where count >= NotificationCategory.maxPerApp {
                throw HeraldError.limit("identifier", "the app has \(count) categories, the most it may have; delete one first")
            }
            let rows = try await connection.query(
                """
                INSERT INTO notification_categories (app_id, identifier, definition)
                VALUES (\(appID), \(category.identifier), \(try Self.definitionText(category))::jsonb)
                ON CONFLICT DO NOTHING
                RETURNING \(unescaped: Self.categoryColumns)
                """,
                logger: logger
            )
            return try await Self.categories(rows).first
        }
    }

    /// Replaces a category's definition and raises its version by one; nil when the app
    /// has no such category.
    public func update(appID: Int64, _ category: NotificationCategory) async throws -> CategoryRecord? {
        let rows = try await client.query(
            """
            UPDATE notification_categories SET definition = \(try Self.definitionText(category))::jsonb,
                version = version + 1, updated_at = now()
            WHERE app_id = \(appID) AND identifier = \(category.identifier)
            RETURNING \(unescaped: Self.categoryColumns)
            """,
            logger: logger
        )
        return try await Self.categories(rows).first
    }

    public func find(appID: Int64, identifier: String) async throws -> CategoryRecord? {
        let rows = try await client.query(
            "SELECT \(unescaped: Self.categoryColumns) FROM notification_categories WHERE app_id = \(appID) AND identifier = \(identifier)",
            logger: logger
        )
        return try await Self.categories(rows).first
    }

    /// The category, read inside a transaction (a schedule firing).
    static func category(appID: Int64, identifier: String, on connection: PostgresConnection, logger: Logger) async throws -> CategoryRecord? {
        let rows = try await connection.query(
            "SELECT \(unescaped: categoryColumns) FROM notification_categories WHERE app_id = \(appID) AND identifier = \(identifier)",
            logger: logger
        )
        return try await categories(rows).first
    }

    /// The app's categories by identifier.
    public func list(appID: Int64) async throws -> [CategoryRecord] {
        let rows = try await client.query(
            "SELECT \(unescaped: Self.categoryColumns) FROM notification_categories WHERE app_id = \(appID) ORDER BY identifier",
            logger: logger
        )
        return try await Self.categories(rows)
    }

    /// Deletes a category and the versions devices reported of it; false when there was none.
    public func delete(appID: Int64, identifier: String) async throws -> Bool {
        try await client.query(
            "DELETE FROM notification_categories WHERE app_id = \(appID) AND identifier = \(identifier) RETURNING version",
            logger: logger
        ).count() > 0
    }

    /// How many devices of the app reported holding each version of the category, by
    /// version.
    public func deviceVersions(appID: Int64, identifier: String) async throws -> [(version: Int64, devices: Int)] {
        let rows = try await client.query(
            """
            SELECT version, count(*) FROM category_device_versions
            WHERE app_id = \(appID) AND identifier = \(identifier) GROUP BY version ORDER BY version
            """,
            logger: logger
        )
        var counts: [(version: Int64, devices: Int)] = []
        for try await (version, count) in rows.decode((Int64, Int64).self) { counts.append((version, Int(count))) }
        return counts
    }

    static let categoryColumns = "definition::text, version, created_at, updated_at"

    private static func categories(_ rows: PostgresRowSequence) async throws -> [CategoryRecord] {
        var records: [CategoryRecord] = []
        for try await (definition, version, created, updated) in rows.decode((String, Int64, Date, Date).self) {
            let category = try JSONDecoder().decode(NotificationCategory.self, from: Data(definition.utf8))
            records.append(CategoryRecord(category: category, version: version, createdAt: created, updatedAt: updated))
        }
        return records
    }

    private static func definitionText(_ category: NotificationCategory) throws -> String {
        String(decoding: try JSONEncoder().encode(category), as: UTF8.self)
    }
}
