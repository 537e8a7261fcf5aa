import HeraldCore
import Logging
import PostgresNIO

/// Herald's data in PostgreSQL: apps, devices, aliases and tags.
///
/// Every operation is scoped to one app id, so one app can never read or change another's
/// devices. Domain failures (limits, unknown ids) are thrown as ``HeraldError`` and roll
/// the transaction back: a request either applies whole or not at all.
public struct HeraldStore: Sendable {
    public private(set) var client: PostgresClient
    let sealer: CredentialSealer
    let logger: Logger
    /// Shared by every copy of this store: the API remembers what it accepted, the
    /// center in the same process reads it back without decoding.
    let recentPushes: RecentPushes

    public init(client: PostgresClient, sealer: CredentialSealer, logger: Logger) {
        self.client = client
        self.sealer = sealer
        self.logger = logger
        self.recentPushes = RecentPushes()
    }

    /// The same store over another pool (one with other session settings), sharing what
    /// this process remembers.
    public func using(_ client: PostgresClient) -> HeraldStore {
        var store = self
        store.client = client
        return store
    }

    /// Whether the database answers a trivial query.
    public func ping() async throws {
        try await client.query("SELECT 1", logger: logger)
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws,
    /// rethrowing its error as is (a ``HeraldError`` stays a ``HeraldError``).
    func transaction<Result: Sendable>(_ body: @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        try await client.withConnection { connection in
            try await connection.query("BEGIN", logger: logger)
            let result: Result
            do {
                result = try await body(connection)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
            try await connection.query("COMMIT", logger: logger)
            return result
        }
    }

    /// SQLSTATE of a failed query, if the server sent one.
    static func sqlState(_ error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }
}

extension PostgresRowSequence {
    /// Number of rows, consuming the sequence.
    func count() async throws -> Int {
        var count = 0
        for try await _ in self { count += 1 }
        return count
    }
}

extension PostgresTransactionError {
    /// The error that made the transaction fail.
    var underlying: any Error {
        closureError ?? beginError ?? commitError ?? self
    }
}
