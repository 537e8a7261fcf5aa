import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// Opens one connection with a deadline, so a database that is down or refuses the
/// credentials is reported in seconds with a reason, instead of the pool retrying for a
/// minute.
public enum DatabaseProbe {
    /// Connects, runs `body` on the connection, closes it.
    public static func withConnection<Result: Sendable>(
        to url: DatabaseURL,
        timeout: Duration = .seconds(10),
        logger: Logger,
        _ body: @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let connection = try await connect(to: url, timeout: timeout, logger: logger)
        do {
            let result = try await body(connection)
            try? await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Connects with a deadline, translating failures into ``DatabaseUnavailableError``.
    public static func connect(to url: DatabaseURL, timeout: Duration = .seconds(10), logger: Logger) async throws -> PostgresConnection {
        // The attempt itself ends at the deadline (a link that takes the connection but
        // never answers its startup), rather than finishing later with nobody to close it.
        let configuration = try url.connectionConfiguration(connectTimeout: timeout)
        do {
            return try await withThrowingTaskGroup(of: PostgresConnection?.self) { group in
                group.addTask {
                    try await PostgresConnection.connect(
                        on: MultiThreadedEventLoopGroup.singleton.any(),
                        configuration: configuration,
                        id: 0,
                        logger: logger
                    )
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let connection = try await group.next() ?? nil else {
                    // An attempt that succeeds after all is closed, not left open.
                    if case let late?? = try? await group.next() { try? await late.close() }
                    throw DatabaseUnavailableError(url: url, reason: "no answer within \(timeout)")
                }
                return connection
            }
        } catch let error as DatabaseUnavailableError {
            throw error
        } catch {
            throw DatabaseUnavailableError(url: url, reason: DatabaseUnavailableError.explain(error, url: url))
        }
    }
}

/// The database can't be used: unreachable, credentials refused, database missing.
public struct DatabaseUnavailableError: Error, CustomStringConvertible {
    public let url: DatabaseURL
    public let reason: String

    public var description: String { "cannot use PostgreSQL at \(url): \(reason)" }

    static func explain(_ error: any Error, url: DatabaseURL) -> String {
        if let error = error as? PSQLError {
            if let state = error.serverInfo?[.sqlState] {
                switch state {
                case "28P01", "28000": return "the server refused the credentials for user '\(url.username)'"
                case "3D000": return "database '\(url.database)' does not exist"
                default: return error.serverInfo?[.message] ?? "server error \(state)"
                }
            }
            if let underlying = error.underlying { return "\(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }
}
