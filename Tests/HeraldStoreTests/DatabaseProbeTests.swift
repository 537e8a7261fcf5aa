import Foundation
import HeraldStore
import HeraldTestSupport
import Testing

@Suite struct DatabaseProbeTests {
    @Test func anUnreachableDatabaseFailsWithinSecondsAndSaysWhere() async throws {
        let url = try DatabaseURL("postgres://herald:secret@127.0.0.1:1/herald?sslmode=disable")
        let started = ContinuousClock.now
        let error = await #expect(throws: DatabaseUnavailableError.self) {
            try await DatabaseProbe.connect(to: url, timeout: .seconds(10), logger: TestDatabase.logger)
        }
        // Bounded by its timeout, not the pool's minute of retries (with room for a loaded
        // machine: this is a bound, not a speed).
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(error?.description.contains("127.0.0.1:1") == true)
        #expect(error?.description.contains("secret") == false)
    }

    @Test func refusedCredentialsAreReportedAsSuch() async throws {
        try await TestDatabase.withDatabase { url in
            var wrong = url
            wrong.password = "not-the-password"
            let error = await #expect(throws: DatabaseUnavailableError.self) {
                try await DatabaseProbe.connect(to: wrong, logger: TestDatabase.logger)
            }
            #expect(error?.reason.contains("refused the credentials") == true)
        }
    }

    @Test func aMissingDatabaseIsReportedByName() async throws {
        try await TestDatabase.withDatabase { url in
            let error = await #expect(throws: DatabaseUnavailableError.self) {
                try await DatabaseProbe.connect(to: url.with(database: "no_such_db"), logger: TestDatabase.logger)
            }
            #expect(error?.reason == "database 'no_such_db' does not exist")
        }
    }

    @Test func databaseURLsParseAndHideTheirPassword() throws {
        let url = try DatabaseURL("postgresql://app%40x:p%3Ass@db.example:6543/herald?sslmode=require")
        #expect(url.username == "app@x")
        #expect(url.password == "p:ss")
        #expect(url.port == 6543)
        #expect(url.tlsMode == .require)
        #expect(!url.description.contains("p:ss"))
        #expect(throws: DatabaseURLError.self) { try DatabaseURL("mysql://x@y/z") }
        #expect(throws: DatabaseURLError.self) { try DatabaseURL("postgres://x@y/z?sslmode=sometimes") }
    }
}
