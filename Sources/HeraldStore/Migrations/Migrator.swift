import Logging
import PostgresNIO

/// Applies migrations in version order, each in its own transaction, recording each with
/// its checksum in `herald_schema_migrations`.
///
/// Runs under a session advisory lock, so nodes starting together apply each migration
/// exactly once: the second waits, then finds nothing left to do.
public struct Migrator: Sendable {
    /// The advisory lock key ("herald" in ASCII).
    static let lockKey: Int64 = 0x68_65_72_61_6c_64
    public let migrations: [Migration]

    public init(migrations: [Migration] = Migration.embedded) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// Brings the database up to date; returns the migrations it applied.
    @discardableResult
    public func migrate(on connection: PostgresConnection, logger: Logger) async throws -> [Migration] {
        try await connection.query("SELECT pg_advisory_lock(\(Self.lockKey))", logger: logger)
        do {
            let applied = try await migrateLocked(on: connection, logger: logger)
            try await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
            return applied
        } catch {
            _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
            throw error
        }
    }

    private func migrateLocked(on connection: PostgresConnection, logger: Logger) async throws -> [Migration] {
        try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS herald_schema_migrations (
                version integer PRIMARY KEY,
                name text NOT NULL,
                checksum text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            logger: logger
        )
        var recorded: [Int: (name: String, checksum: String)] = [:]
        let rows = try await connection.query("SELECT version, name, checksum FROM herald_schema_migrations", logger: logger)
        for try await (version, name, checksum) in rows.decode((Int, String, String).self) {
            recorded[version] = (name, checksum)
        }

        let known = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
        for (version, entry) in recorded.sorted(by: { $0.key < $1.key }) {
            guard let migration = known[version] else {
                throw MigrationError.unknownAppliedVersion(version: version, name: entry.name)
            }
            guard migration.checksum == entry.checksum else {
                throw MigrationError.checksumMismatch(version: version, name: migration.name)
            }
        }

        var applied: [Migration] = []
        for migration in migrations where recorded[migration.version] == nil {
            logger.info("applying migration", metadata: ["herald.migration": "\(migration.version)_\(migration.name)"])
            do {
                try await connection.withTransaction(logger: logger) { connection in
                    for statement in SQLScript.statements(migration.sql) {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await connection.query(
                        """
                        INSERT INTO herald_schema_migrations (version, name, checksum)
                        VALUES (\(migration.version), \(migration.name), \(migration.checksum))
                        """,
                        logger: logger
                    )
                }
            } catch {
                let cause = (error as? PostgresTransactionError)?.underlying ?? error
                let reason = (cause as? PSQLError).map { $0.serverInfo?[.message] ?? "\($0.code)" } ?? "\(cause)"
                throw MigrationError.failed(version: migration.version, name: migration.name, reason: reason)
            }
            applied.append(migration)
        }
        return applied
    }
}
