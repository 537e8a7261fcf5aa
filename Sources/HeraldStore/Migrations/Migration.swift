import Crypto
import HeraldCore

/// One schema migration: a plain SQL file `migrations/NNNN_name.sql`, embedded at build time.
public struct Migration: Sendable, Hashable {
    public let version: Int
    public let name: String
    public let sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// SHA-256 of the SQL text: an applied migration whose file was edited afterwards is
    /// detected by its checksum no longer matching the one recorded when it ran.
    public var checksum: String { Hex.encode(SHA256.hash(data: Array(sql.utf8))) }
}
