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

    /// Terminates the victim's backend while a query of its is running (a request in flight
    /// when PostgreSQL shuts down), and checks the error that query gets. A query sent after
    /// the termination could wait forever on a connection whose close raced with it (it hung
    /// a full run once), so the error comes from the running query, within a bound.
    private func terminate(_ victim: PostgresConnection, from killer: PostgresConnection) async throws {
        var pid = 0
        for try await value in try await victim.query("SELECT pg_backend_pid()::int", logger: TestDatabase.logger).decode(Int.self) {
            pid = value
        }
        let running = Task { () -> (any Error)? in
            do {
                // The rows are where a running query's error arrives.
                for try await _ in try await victim.query("SELECT pg_sleep(30)", logger: TestDatabase.logger) {}
                return nil
            } catch {
                return error
            }
        }
        // Wait until the sleep is running, then end its backend.
        let deadline = ContinuousClock.now + .seconds(10)
        var sleeping = false
        while !sleeping, ContinuousClock.now < deadline {
            let rows = try await killer.query(
                "SELECT count(*)::int FROM pg_stat_activity WHERE pid = \(pid) AND state = 'active' AND query LIKE 'SELECT pg_sleep%'",
                logger: TestDatabase.logger
            )
            for try await count in rows.decode(Int.self) { sleeping = count == 1 }
            if !sleeping { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(sleeping, "the victim's query never showed as running")
        try await killer.query("SELECT pg_terminate_backend(\(pid)::int)", logger: TestDatabase.logger)
        let error = await running.value
        let failure = try #require(error, "the terminated query returned normally")
        #expect(DatabaseFailure.isUnavailability(failure), "\(String(reflecting: failure))")
    }

    @Test func aPoolWithNoConnectionToGiveAndACancelledWaitAreUnavailability() {
        #expect(DatabaseFailure.isUnavailability(ConnectionPoolError.connectionCreationCircuitBreakerTripped))
        #expect(DatabaseFailure.isUnavailability(ConnectionPoolError.requestCancelled))
        #expect(DatabaseFailure.isUnavailability(CancellationError()))
        #expect(!DatabaseFailure.isUnavailability(HeraldError(.internalError, "x")))
    }
}
