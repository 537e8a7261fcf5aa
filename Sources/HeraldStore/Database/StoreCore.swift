import HeraldCore
import Logging
import PostgresNIO

/// What the store's facades (``APIStore``, ``CenterStore``, ``GatewayStore``) share: the
/// pool each uses, the sealer of APNs credentials, this node's cache of pushes it accepted,
/// the maker of its message ids, and the logger.
struct StoreCore: Sendable {
    let client: PostgresClient
    let sealer: CredentialSealer
    let recentPushes: RecentPushes
    let msgIDs: MessageIDs
    /// Which apps record delivery events (shared by the facades).
    let eventApps: EventApps
    let logger: Logger
}

/// A facade of the store over one pool: transactions, deadlock retries, SQLSTATEs.
protocol StoreFacade: Sendable {
    var core: StoreCore { get }
}

extension StoreFacade {
    var client: PostgresClient { core.client }
    var logger: Logger { core.logger }
    var sealer: CredentialSealer { core.sealer }
    var recentPushes: RecentPushes { core.recentPushes }
    var msgIDs: MessageIDs { core.msgIDs }

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

    /// Runs `body` again when PostgreSQL broke a deadlock (or a serialization conflict) by
    /// aborting it.
    @discardableResult
    func retryingDeadlocks<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await body()
            } catch  where ["40P01", "40001"].contains(Self.sqlState(error)) && attempt < 5 {
                try await Task.sleep(for: .milliseconds(10 * attempt))
            }
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
