import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import PostgresNIO
import Testing

/// The audit log (issue #30): every change through the API and every refused key, with who,
/// from where and the body's digest; append-only; a row altered behind Herald's back is
/// named by the chain's verification.
@Suite struct AuditLogTests {
    static func entries(_ api: APITest, _ auth: Auth, query: String = "") async throws -> [[String: Any]] {
        let reply = try await api.send(.get, "/v3/audit\(query)", auth: auth)
        #expect(reply.status == 200, "\(reply.body)")
        return try reply.json["entries"] as? [[String: Any]] ?? []
    }

    @Test func changesAndRefusalsAreLoggedWithWhoAndTheBodysDigest() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app, apnsToken: randomAPNsToken())
            let key = try await APIKeyTests.key(api, app, ["send", "audit:read"])
            let keyID = String(key.prefix(15))
            let push = #"{"platform": "all", "audience": {"registration_id": ["\#(device.registrationID)"]}, "notification": {"alert": "x"}}"#
            #expect(try await api.send(.post, "/v3/push", auth: .basic(app.appKey, key), json: push).status == 200)
            // Refused for its scope: logged too.
            #expect(try await api.send(.delete, "/v3/push/1810000000000000001", auth: .basic(app.appKey, key)).status == 403)
            // A read is not logged; a device acting on itself is not.
            #expect(try await api.send(.get, "/v3/keys", auth: app.auth).status == 200)
            #expect(try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: device.auth, json: #"{"alias": "me"}"#).status == 200)

            let entries = try await Self.entries(api, .basic(app.appKey, key))
            let lines = entries.map { "\($0["actor"] as? String ?? "") \($0["action"] as? String ?? "") \($0["status"] as? Int ?? 0)" }
            #expect(
                lines == [
                    "master_secret POST /v3/keys 201", "key:\(keyID) POST /v3/push 200", "key:\(keyID) DELETE /v3/push/{msg_id} 403",
                ],
                "\(lines)"
            )
            let pushed = try #require(entries.first { $0["action"] as? String == "POST /v3/push" })
            let digest = Hex.encode(SecretHash.digest(push))
            #expect(pushed["body_digest"] as? String == digest)
            #expect(pushed["app_key"] as? String == app.appKey)
            #expect(pushed["target"] as? String == "/v3/push")
            #expect((pushed["request_id"] as? String)?.isEmpty == false)
            // Filters.
            #expect(try await Self.entries(api, .basic(app.appKey, key), query: "?actor=master_secret").count == 1)
            #expect(try await Self.entries(api, .basic(app.appKey, key), query: "?action=POST%20/v3/push").count == 1)
            // Another app sees none of them; the administrator sees them all.
            let other = try await api.createApp("Other")
            let otherKey = try await APIKeyTests.key(api, other, ["audit:read"])
            #expect(try await Self.entries(api, .basic(other.appKey, otherKey)).map { $0["action"] as? String } == ["POST /v3/keys"])
            let all = try await api.send(.get, "/admin/v1/audit?app_key=\(app.appKey)", auth: .admin)
            #expect((try all.json["entries"] as? [Any])?.count == 3, "\(all.body)")
        }
    }

    /// An administrator's action on an app is the app's entry too; the log is streamed as
    /// it is written (server-sent events, resumable), as the event log is.
    @Test func adminActionsAreTheAppsAndTheLogIsStreamed() async throws {
        try await APITest.live { api, _ in
            let app = try await api.createApp()
            #expect(try await api.send(.patch, "/admin/v1/apps/\(app.appKey)", auth: .admin, json: #"{"rate_limit_per_minute": 100}"#).status == 200)
            let own = try await Self.entries(api, app.auth)
            #expect(own.contains { $0["action"] as? String == "PATCH /admin/v1/apps/{app_key}" && $0["actor"] as? String == "admin_token" }, "\(own)")

            let port = try #require(api.client.port)
            let client = HTTPClient()
            defer { _ = client.shutdown() }
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/admin/v1/audit")
            request.headers.add(name: "Authorization", value: Auth.admin.header)
            request.headers.add(name: "Accept", value: "text/event-stream")
            request.headers.add(name: "Last-Event-ID", value: "1")  // after the app's creation
            let response = try await client.execute(request, timeout: .seconds(30))
            #expect(response.headers.first(name: "content-type") == "text/event-stream")
            var text = ""
            var actions: [String] = []
            for try await chunk in response.body {
                text += String(buffer: chunk)
                while let end = text.range(of: "\n\n") {
                    let block = String(text[..<end.lowerBound])
                    text = String(text[end.upperBound...])
                    guard block.contains("event: audit"), let data = block.split(separator: "\n").first(where: { $0.hasPrefix("data: ") }) else {
                        continue
                    }
                    let entry = try JSONSerialization.jsonObject(with: Data(data.dropFirst(6).utf8)) as? [String: Any]
                    actions.append(entry?["action"] as? String ?? "?")
                    // Written while the stream is open: it arrives too.
                    if actions.count == 1 { _ = try await APIKeyTests.key(api, app, ["send"]) }
                }
                if actions.count >= 2 { break }
            }
            #expect(actions == ["PATCH /admin/v1/apps/{app_key}", "POST /v3/keys"], "\(actions)")
        }
    }

    /// A push's entry is written in the push's own commit (accepted means audited), one per
    /// request however many pushes it makes, and chained like every other.
    @Test func aPushesEntryIsInItsOwnCommitOncePerRequest() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let one = try await api.registerDevice(app)
            let two = try await api.registerDevice(app)
            func count(_ table: String, _ action: String) async throws -> Int {
                let rows = try await api.store.sql.query("SELECT count(*) FROM \(unescaped: table) WHERE action = \(action)").collect()
                return try rows.first?.decode(Int.self) ?? -1
            }
            func entries(_ action: String) async throws -> Int {
                try await count("audit_log", action) + count("audit_pending", action)
            }
            let push = #"{"platform": "all", "audience": {"registration_id": ["\#(one.registrationID)"]}, "notification": {"alert": "x"}}"#
            #expect(try await api.send(.post, "/v3/push", auth: app.auth, json: push).status == 200)
            // In the database as the answer arrives: written by the push's commit, not after.
            #expect(try await entries("POST /v3/push") == 1)
            // A refused push: its entry from the route, once.
            let nobody = #"{"platform": "all", "audience": {"registration_id": ["\#(unknownRegistrationID())"]}, "notification": {"alert": "x"}}"#
            #expect(try await api.send(.post, "/v3/push", auth: app.auth, json: nobody).status == 400)
            #expect(try await entries("POST /v3/push") == 2)
            // A batch of two pushes and a bad entry: one entry for the request.
            let batch = BatchPushTests.body([
                "c-1": BatchPushTests.entry(one.registrationID, "a"), "c-2": BatchPushTests.entry(two.registrationID, "b"),
                "c-3": BatchPushTests.entry(unknownRegistrationID(), "c"),
            ])
            #expect(try await api.send(.post, BatchPushTests.regid, auth: app.auth, json: batch).status == 200)
            #expect(try await entries("POST /v3/push/batch/regid/single") == 1)
            // Read, they are chained, in order, and the chain verifies.
            let read = try await Self.entries(api, app.auth)
            #expect(read.map { $0["status"] as? Int } == [200, 400, 200], "\(read)")
            #expect(try await count("audit_pending", "POST /v3/push") == 0)
            let verified = try await api.send(.get, "/admin/v1/audit/verify", auth: .admin)
            let intact = try verified.json["intact"] as? Bool
            #expect(verified.status == 200 && intact == true, "\(verified.body)")
        }
    }

    @Test func theLogIsAppendOnlyAndATamperedRowIsNamed() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            for index in 0..<5 {
                _ = try await api.send(.post, "/v3/keys", auth: app.auth, json: #"{"name": "k\#(index)", "scopes": ["send"]}"#)
            }
            let intact = try await api.send(.get, "/admin/v1/audit/verify", auth: .admin)
            #expect(intact.body.contains(#""intact":true"#) && intact.body.contains(#""checked":6"#), "\(intact.body)")
            // Herald's own statements can't change it.
            await #expect(throws: (any Error).self) {
                try await api.store.sql.query("UPDATE audit_log SET status = 200 WHERE id = 3")
            }
            await #expect(throws: (any Error).self) { try await api.store.sql.query("DELETE FROM audit_log WHERE id = 3") }
            // Someone with the database's owner rights can: the chain names the row.
            let rows = try await api.store.sql.query("SELECT id FROM audit_log ORDER BY id")
            var ids: [Int64] = []
            for try await id in rows.decode(Int64.self) { ids.append(id) }
            let victim = ids[3]
            try await api.store.sql.query("ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only")
            try await api.store.sql.query("UPDATE audit_log SET actor = 'someone else' WHERE id = \(victim)")
            try await api.store.sql.query("ALTER TABLE audit_log ENABLE TRIGGER audit_log_append_only")
            let broken = try await api.send(.get, "/admin/v1/audit/verify", auth: .admin)
            #expect(broken.body.contains(#""intact":false"#) && broken.body.contains(#""first_broken_id":\#(victim)"#), "\(broken.body)")
        }
    }
}
