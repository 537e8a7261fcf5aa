import Foundation
import HeraldCore
import HeraldStore

extension TestDatabase {
    /// Runs `body` with a PostgreSQL cluster of its own, migrated, that `body` may stop (an
    /// outage); the cluster is stopped and deleted afterwards.
    public static func withDedicatedCluster<Result: Sendable>(_ body: @Sendable (EmbeddedPostgres) async throws -> Result) async throws -> Result {
        try await TestSlots.withSlot {
            let directory = NSTemporaryDirectory() + "herald-dedicated-" + RandomToken.hex(byteCount: 8)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let cluster = try await EmbeddedPostgres.start(.init(directory: directory, durable: false), logger: logger)
            do {
                _ = try await DatabaseProbe.withConnection(to: cluster.url, logger: logger) { connection in
                    try await Migrator().migrate(on: connection, logger: logger)
                }
                let result = try await body(cluster)
                cluster.stopImmediately()
                return result
            } catch {
                cluster.stopImmediately()
                throw error
            }
        }
    }
}
