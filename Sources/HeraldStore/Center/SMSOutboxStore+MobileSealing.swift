import Foundation
import HeraldCore
import PostgresNIO

extension SMSOutboxStore {
    /// Seals up to `limit` mobile numbers still held in clear (from before migration 0023,
    /// or written by an import) and empties their clear column; returns how many. Rows
    /// another node is sealing are skipped.
    @discardableResult
    public func sealClearMobiles(limit: Int = 500) async throws -> Int {
        try await transaction { connection in
            let rows = try await connection.query(
                "SELECT id, app_id, mobile FROM devices WHERE mobile IS NOT NULL ORDER BY id LIMIT \(limit) FOR UPDATE SKIP LOCKED",
                logger: logger
            )
            var ids: [Int64] = []
            var sealed: [ByteBuffer] = []
            var keys: [String] = []
            for try await (id, appID, mobile) in rows.decode((Int64, Int64, String).self) {
                let secret = try MobileSealing.seal(mobile, appID: appID, sealer: sealer)
                ids.append(id)
                sealed.append(ByteBuffer(bytes: secret.combined))
                keys.append(secret.keyID)
            }
            guard !ids.isEmpty else { return 0 }
            try await connection.query(
                """
                UPDATE devices d SET mobile = NULL, mobile_sealed = u.sealed, mobile_key = u.key
                FROM unnest(\(ids)::bigint[], \(sealed)::bytea[], \(keys)::text[]) AS u(id, sealed, key)
                WHERE d.id = u.id
                """,
                logger: logger
            )
            return ids.count
        }
    }
}
