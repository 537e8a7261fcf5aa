import Foundation
import HTTPTypes
import HeraldTestSupport
import Testing

@Suite struct BadInputTests {
    /// Every kind of malformed device update gets its code and leaves the device as it was.
    @Test func malformedUpdatesGetTheirCodeAndChangeNothing() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app)
            try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: app.auth, json: #"{"tags": {"add": ["keep"]}, "alias": "keep"}"#)
            let before = try await api.send(.get, "/v3/devices/\(device.registrationID)", auth: app.auth).body

            let cases: [(String, Int, Int)] = [
                ("{not json", 400, 1001),
                ("", 400, 1001),
                ("[]", 400, 1001),
                (#"{"tag": {"add": ["x"]}}"#, 400, 1001),
                (#"{"tags": {"add": ["x"], "delete": ["y"]}}"#, 400, 1001),
                (#"{"tags": {"add": "x"}}"#, 400, 1002),
                (#"{"tags": 5}"#, 400, 1002),
                (#"{"tags": "everything"}"#, 400, 1002),
                (#"{"tags": {"add": ["a"], "remove": ["a"]}}"#, 400, 1002),
                (#"{"tags": {"add": [""]}}"#, 400, 1002),
                (#"{"tags": {"add": ["x\u0007"]}}"#, 400, 1002),
                (#"{"alias": 12}"#, 400, 1002),
                (#"{"alias": ["a"]}"#, 400, 1002),
                (#"{"apns_token": "zz"}"#, 400, 1002),
                (#"{"apns_environment": "moon"}"#, 400, 1002),
            ]
            for (body, status, code) in cases {
                let reply = try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: app.auth, json: body)
                #expect(reply.status == status, "\(body) → \(reply.status) \(reply.body)")
                #expect(reply.errorCode == code, "\(body) → \(reply.body)")
            }
            let after = try await api.send(.get, "/v3/devices/\(device.registrationID)", auth: app.auth).body
            #expect(after == before)
        }
    }

    @Test func aBodyThatIsNotJSONIs415() async throws {
        try await APITest.run { api in
            let reply = try await api.send(
                .post,
                "/admin/v1/apps",
                auth: .admin,
                json: "name=x",
                headers: [.contentType: "application/x-www-form-urlencoded"]
            )
            #expect(reply.status == 415)
            #expect(reply.errorCode == 1014)
            #expect(try await api.store.api.listApps().isEmpty)
        }
    }

    @Test func malformedCredentialsAre401() async throws {
        try await APITest.run { api in
            for header in ["Basic", "Basic !!!", "Basic " + Data("no-colon".utf8).base64EncodedString(), "Bearer x", "Digest abc"] {
                let reply = try await api.send(.get, "/v3/tags", headers: [.authorization: header])
                #expect(reply.status == 401, "\(header)")
                #expect(reply.errorCode == 1003)
                #expect(reply.headers[.wwwAuthenticate] != nil)
            }
        }
    }

    @Test func unknownRoutesAre404AndWrongMethodsAre405() async throws {
        try await APITest.run { api in
            let missing = try await api.send(.get, "/v3/nothing")
            #expect(missing.status == 404)
            #expect(missing.errorCode == 1005)
            let method = try await api.send(.put, "/v3/devices/\(unknownRegistrationID())")
            #expect(method.status == 405)
            #expect(method.errorCode == 1015)
        }
    }

    @Test func errorsAreJSONWithAStableCodeAndNoDatabaseText() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            // Ids of the wrong shape never reach the database.
            let reply = try await api.send(.get, "/v3/devices/'; DROP TABLE devices; --", auth: app.auth)
            #expect(reply.status == 404)
            #expect(reply.headers[.contentType]?.hasPrefix("application/json") == true)
            #expect(reply.errorCode != nil)
            for word in ["SQL", "postgres", "PSQL", "relation"] {
                #expect(reply.body.contains(word) == false)
            }
        }
    }
}
