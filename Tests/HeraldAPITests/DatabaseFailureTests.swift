import HeraldCore
import HeraldStore
import HeraldTestSupport
import PostgresNIO
import Testing
import _ConnectionPoolModule

@testable import HeraldAPI

/// Which database failures are "unavailable" (503) and which are bugs (500), from
/// errors a real PostgreSQL gives.
struct DatabaseFailureTests {
    @Test func aQueryThatIsWrongIsABugNotUnavailability() async throws {
        try await TestDatabase.withDatabase { url in
            let connection = try await DatabaseProbe.connect(to: url, logger: TestDatabase.logger)
            // An expectation, not a throw, so the connection is always closed below.
            await #expect(throws: PSQLError.self) {
                do {
                    try await connection.query("SELECT * FROM no_such_table", logger: TestDatabase.logger)
                } catch {
                    #expect(!DatabaseFailure.isUnavailability(error), "\(String(reflecting: error))")
                    throw error
                }
            }
            try? await connection.close()
        }
    }

    @Test func aConnectionThePostgreSQLServerTerminatedIsUnavailability() async throws {
        try await TestDatabase.withDatabase { url in
            let victim = try await DatabaseProbe.connect(to: url, logger: TestDatabase.logger)
            let killer = try await DatabaseProbe.connect(to: url, logger: TestDatabase.logger)
            do {
                try await terminate(victim, from: killer)
            } catch {
                try? await victim.close()
                try? await killer.close()
                throw error
            }
            try? await victim.close()
            try? await killer.close()
        }
    }

    private func terminate(_ victim: PostgresConnection, from killer: PostgresConnection) async throws {
        var pid = 0
        for try await value in try await victim.query("SELECT pg_backend_pid()::int", logger: TestDatabase.logger).decode(Int.self) {
            pid = value
        }
        try await killer.query("SELECT pg_terminate_backend(\(pid)::int)", logger: TestDatabase.logger)
        await #expect(throws: (any Error).self) {
            do {
                try await victim.query("SELECT 1", logger: TestDatabase.logger)
            } catch {
                #expect(DatabaseFailure.isUnavailability(error), "\(String(reflecting: error))")
                throw error
            }
        }
    }

    @Test func aPoolWithNoConnectionToGiveAndACancelledWaitAreUnavailability() {
        #expect(DatabaseFailure.isUnavailability(ConnectionPoolError.connectionCreationCircuitBreakerTripped))
        #expect(DatabaseFailure.isUnavailability(ConnectionPoolError.requestCancelled))
        #expect(DatabaseFailure.isUnavailability(CancellationError()))
        #expect(!DatabaseFailure.isUnavailability(HeraldError(.internalError, "x")))
    }
}
