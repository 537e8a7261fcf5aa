import PostgresNIO
import _ConnectionPoolModule

/// Which failures mean "the database can't be used right now" (answered 503, retry
/// later) rather than a bug (500): no connection to be had, or one lost under the query.
public enum DatabaseFailure {
    /// SQLSTATEs of a server that is going away or not accepting work: admin_shutdown,
    /// crash_shutdown, cannot_connect_now, too_many_connections; and every connection
    /// exception (class 08).
    static let unavailableStates: Set<String> = ["57P01", "57P02", "57P03", "53300"]

    /// Whether `error` says the database can't be used right now (a 503), not a bug.
    public static func isUnavailability(_ error: any Error) -> Bool {
        switch error {
        case is DatabaseUnavailableError, is CancellationError:
            return true
        case is ConnectionPoolError:
            // No connection within the wait (cancelled), none for a minute (circuit
            // breaker), or the pool is shutting down.
            return true
        case let error as PSQLError:
            if let state = error.serverInfo?[.sqlState] {
                return state.hasPrefix("08") || unavailableStates.contains(state)
            }
            switch error.code {
            case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed, .queryCancelled:
                return true
            default:
                return false
            }
        case let error as PostgresTransactionError:
            return [error.beginError, error.closureError, error.commitError].contains { $0.map(isUnavailability) ?? false }
        default:
            return false
        }
    }
}
