import Foundation
import HeraldStore
import HeraldTestSupport
import Logging
import PostgresNIO
import Testing

@Suite struct MigratorTests {
    let logger = TestDatabase.logger

    @Test func migrationsApplyFromEmptyAndAreIdempotent() async throws {
        try await TestDatabase.withDatabase(migrated: false) { url in
            try await DatabaseProbe.withConnection(to: url, logger: logger) { connection in
                let first = try await Migrator().migrate(on: connection, logger: logger)
                #expect(first.map(\.version) == Migration.embedded.map(\.version))
                #expect(!first.isEmpty)
                let second = try await Migrator().migrate(on: connection, logger: logger)
                #expect(second.isEmpty)

                let tables = try await connection.query(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
                    logger: logger
                )
                var names: [String] = []
                for try await name in tables.decode(String.self) { names.append(name) }
                let required: Set = ["apps", "device_tags", "devices", "device_messages", "herald_schema_migrations"]
                #expect(required.isSubset(of: names), "missing tables: \(required.subtracting(names).sorted())")

                let recorded = try await connection.query("SELECT version, checksum FROM herald_schema_migrations ORDER BY version", logger: logger)
                var checksums: [Int: String] = [:]
                for try await (version, checksum) in recorded.decode((Int, String).self) { checksums[version] = checksum }
                #expect(checksums == Dictionary(uniqueKeysWithValues: Migration.embedded.map { ($0.version, $0.checksum) }))
            }
        }
    }

    /// The build embeds `migrations/*.sql` with a plugin that SwiftPM runs again only when
    /// the package's targets or sources change: a migration file just added (or edited)
    /// can be missing from a build until then (`touch Package.swift` forces it).
    @Test func theBuildEmbedsEveryMigrationInTheRepository() throws {
        let directory = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../migrations")
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
            .map { (name: $0.deletingPathExtension().lastPathComponent, sql: try String(contentsOf: $0, encoding: .utf8)) }
            .sorted { $0.name < $1.name }
        let embedded = Migration.embedded.map { (name: String(format: "%04d_%@", $0.version, $0.name), sql: $0.sql) }
        #expect(embedded.map(\.name) == files.map(\.name), "stale build: touch Package.swift")
        #expect(embedded.map(\.sql) == files.map(\.sql), "stale build: touch Package.swift")
    }

    @Test func anEditedAppliedMigrationIsAnError() async throws {
        try await TestDatabase.withDatabase(migrated: false) { url in
            try await DatabaseProbe.withConnection(to: url, logger: logger) { connection in
                let original = Migration(version: 1, name: "one", sql: "CREATE TABLE one (id int)")
                try await Migrator(migrations: [original]).migrate(on: connection, logger: logger)
                let edited = Migration(version: 1, name: "one", sql: "CREATE TABLE one (id bigint)")
                await #expect(throws: MigrationError.checksumMismatch(version: 1, name: "one")) {
                    try await Migrator(migrations: [edited]).migrate(on: connection, logger: logger)
                }
            }
        }
    }

    @Test func aDatabaseFromANewerHeraldIsRefused() async throws {
        try await TestDatabase.withDatabase(migrated: false) { url in
            try await DatabaseProbe.withConnection(to: url, logger: logger) { connection in
                let one = Migration(version: 1, name: "one", sql: "CREATE TABLE one (id int)")
                let two = Migration(version: 2, name: "two", sql: "CREATE TABLE two (id int)")
                try await Migrator(migrations: [one, two]).migrate(on: connection, logger: logger)
                await #expect(throws: MigrationError.unknownAppliedVersion(version: 2, name: "two")) {
                    try await Migrator(migrations: [one]).migrate(on: connection, logger: logger)
                }
            }
        }
    }

    @Test func aFailingMigrationLeavesNothingBehind() async throws {
        try await TestDatabase.withDatabase(migrated: false) { url in
            try await DatabaseProbe.withConnection(to: url, logger: logger) { connection in
                let broken = Migration(version: 1, name: "broken", sql: "CREATE TABLE half (id int); CREATE TABLE oops (id nosuchtype);")
                await #expect(throws: MigrationError.self) {
                    try await Migrator(migrations: [broken]).migrate(on: connection, logger: logger)
                }
                let rows = try await connection.query(
                    "SELECT count(*) FROM information_schema.tables WHERE table_name IN ('half', 'oops')",
                    logger: logger
                )
                for try await count in rows.decode(Int.self) { #expect(count == 0) }
                let applied = try await connection.query("SELECT count(*) FROM herald_schema_migrations", logger: logger)
                for try await count in applied.decode(Int.self) { #expect(count == 0) }
            }
        }
    }

    @Test func nodesStartingTogetherApplyEachMigrationOnce() async throws {
        try await TestDatabase.withDatabase(migrated: false) { url in
            let applied = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await DatabaseProbe.withConnection(to: url, logger: logger) { connection in
                            try await Migrator().migrate(on: connection, logger: logger).count
                        }
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(applied == Migration.embedded.count)
        }
    }
}
