import AsyncHTTPClient
import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import PostgresNIO
import Prometheus
import Testing

/// The API while PostgreSQL is down or going away: 503 `unavailable` with `Retry-After`
/// within a bounded wait, never a 500, and back to normal once PostgreSQL is, without a
/// restart. Over real sockets (the live test client gives up after 20 s).
struct DatabaseOutageTests {
    @Test func requestsWhilePostgreSQLIsStoppedAnswer503AndTheAPIRecoversWithoutARestart() async throws {
        // This test stalled once on CI with every thread idle: name the step it is in.
        let watch = PhaseWatch("DatabaseOutageTests")
        // Stopping the cluster's handle stops whichever server runs in the directory, so
        // the one started again below is stopped at the end too.
        try await OwnDatabaseAPI.run("outage", watch: watch) { api, cluster, directory in
            let logger = TestDatabase.logger
            watch.enter("creating an app")
            let created = try await api.send(.post, "/admin/v1/apps", auth: .admin, json: #"{"name": "Before"}"#)
            #expect(created.status == 201)

            watch.enter("stopping PostgreSQL")
            await cluster.stop(logger: logger)
            watch.enter("requests while PostgreSQL is stopped")
            for name in ["During 1", "During 2", "During 3"] {
                let reply = try await api.send(.post, "/admin/v1/apps", auth: .admin, json: #"{"name": "\#(name)"}"#)
                #expect(reply.status == 503, "\(reply.body)")
                #expect(reply.errorCode == HeraldError.Code.unavailable.rawValue, "\(reply.body)")
                #expect(reply.headers[.retryAfter].flatMap(Int.init) ?? 0 > 0)
            }

            watch.enter("starting PostgreSQL again")
            _ = try await EmbeddedPostgres.start(.init(directory: directory, port: cluster.url.port, durable: false), logger: logger)
            watch.enter("requests until the API recovers")
            // The pool reconnects after its back-off: bounded by the wait below.
            var last = Reply(status: 0, body: "", headers: [:])
            let deadline = ContinuousClock.now + .seconds(90)
            while ContinuousClock.now < deadline {
                last = try await api.send(.post, "/admin/v1/apps", auth: .admin, json: #"{"name": "After"}"#)
                if last.status == 201 { break }
                #expect(last.status == 503, "\(last.body)")
                try await Task.sleep(for: .milliseconds(500))
            }
            #expect(last.status == 201, "\(last.body)")
        }
    }

    /// A query PostgreSQL ends with admin_shutdown (57P01), as on a shutdown, is a 503.
    @Test func aRequestWhoseConnectionIsTerminatedAnswers503() async throws {
        try await APITest.live { configuration, url in
            configuration.databaseURL = url
            configuration.databaseWait = .seconds(1)
        } _: { api, url in
            let connection = try await DatabaseProbe.connect(to: url, logger: TestDatabase.logger)
            do {
                try await terminateAHeldRequest(api: api, holding: connection)
                try? await connection.close()
            } catch {
                try? await connection.close()
                throw error
            }
        }
    }

    private func terminateAHeldRequest(api: APITest, holding connection: PostgresConnection) async throws {
        // Hold the apps table so the request's insert waits inside PostgreSQL.
        try await connection.query("BEGIN", logger: TestDatabase.logger)
        try await connection.query("LOCK TABLE apps IN ACCESS EXCLUSIVE MODE", logger: TestDatabase.logger)
        // Its own client: the test client gives a request 20 s, and this one waits for the
        // lock while the test finds it waiting (a poll that takes longer on a loaded machine).
        let port = try #require(api.client.port)
        async let reply = Self.send(#"{"name": "Held"}"#, to: port)
        do {
            try await waitUntilAQueryWaitsForTheLock(connection)
        } catch {
            // Let the request go, or leaving this function would wait for it forever.
            try await connection.query("ROLLBACK", logger: TestDatabase.logger)
            _ = try? await reply
            throw error
        }
        try await connection.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
            logger: TestDatabase.logger
        )
        let answer = try await reply
        #expect(answer.status == 503, "\(answer.body)")
        #expect(answer.errorCode == HeraldError.Code.unavailable.rawValue, "\(answer.body)")
        #expect(answer.headers[.retryAfter] != nil)
        try await connection.query("ROLLBACK", logger: TestDatabase.logger)
    }

    /// `POST /admin/v1/apps` with `body`, given 90 s.
    private static func send(_ body: String, to port: Int) async throws -> Reply {
        let client = HTTPClient()
        do {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/admin/v1/apps")
            request.method = .POST
            request.headers.add(name: "Authorization", value: Auth.admin.header)
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
            let response = try await client.execute(request, timeout: .seconds(90))
            let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
            var headers = HTTPFields()
            for (name, value) in response.headers {
                if let field = HTTPField.Name(name) { headers[field] = value }
            }
            try await client.shutdown()
            return Reply(status: Int(response.status.code), body: text, headers: headers)
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    private func waitUntilAQueryWaitsForTheLock(_ connection: PostgresConnection) async throws {
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            // In a transaction, the statistics views keep their first snapshot.
            try await connection.query("SELECT pg_stat_clear_snapshot()", logger: TestDatabase.logger)
            let rows = try await connection.query(
                "SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
                logger: TestDatabase.logger
            )
            for try await count in rows.decode(Int.self) where count > 0 { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ReplyError("no query waited for the lock on apps")
    }
}
