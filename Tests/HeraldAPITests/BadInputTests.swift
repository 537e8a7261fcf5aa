import Foundation
import HTTPTypes
import HeraldCore
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

            let cases: [(String, Int, HeraldError.Code)] = [
                ("{not json", 400, .invalidJSON),
                ("", 400, .invalidJSON),
                ("[]", 400, .invalidJSON),
                (#"{"tag": {"add": ["x"]}}"#, 400, .unsupportedKey),
                (#"{"tags": {"add": ["x"], "delete": ["y"]}}"#, 400, .unsupportedKey),
                (#"{"tags": {"add": "x"}}"#, 400, .invalidField),
                (#"{"tags": 5}"#, 400, .invalidField),
                (#"{"tags": "everything"}"#, 400, .invalidField),
                (#"{"tags": {"add": ["a"], "remove": ["a"]}}"#, 400, .invalidField),
                (#"{"tags": {"add": [""]}}"#, 400, .invalidField),
                (#"{"tags": {"add": ["x\u0007"]}}"#, 400, .invalidField),
                (#"{"alias": 12}"#, 400, .invalidField),
                (#"{"alias": ["a"]}"#, 400, .invalidField),
                (#"{"apns_token": "zz"}"#, 400, .invalidField),
                (#"{"apns_environment": "moon"}"#, 400, .invalidField),
            ]
            for (body, status, code) in cases {
                let reply = try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: app.auth, json: body)
                #expect(reply.status == status, "\(body) → \(reply.status) \(reply.body)")
                #expect(reply.errorCode == code.rawValue, "\(body) → \(reply.body)")
            }
            let after = try await api.send(.get, "/v3/devices/\(device.registrationID)", auth: app.auth).body
            #expect(after == before)
        }
    }

    @Test func aBodyOfAnotherMediaTypeIs415() async throws {
        try await APITest.run { api in
            let reply = try await api.send(.post, "/admin/v1/apps", auth: .admin, json: "name=x", headers: [.contentType: "text/plain"])
            #expect(reply.status == 415)
            #expect(reply.errorCode == HeraldError.Code.unsupportedMediaType.rawValue)
            #expect(try await api.store.api.listApps().isEmpty)
        }
    }

    /// JPush's documentation posts its JSON with curl -d (a form's Content-Type) and JPush
    /// reads it as JSON; a form that isn't JSON is refused as not JSON.
    @Test func aJSONBodySentAsAFormIsReadAsJSON() async throws {
        try await APITest.run { api in
            let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
            let refused = try await api.send(.post, "/admin/v1/apps", auth: .admin, json: "name=x", headers: form)
            #expect(refused.status == 400)
            #expect(refused.errorCode == HeraldError.Code.invalidJSON.rawValue)
            #expect(try await api.store.api.listApps().isEmpty)
            let made = try await api.send(.post, "/admin/v1/apps", auth: .admin, json: #"{"name": "Form"}"#, headers: form)
            #expect(made.status == 201, "\(made.body)")
            #expect(try await api.store.api.listApps().map(\.name) == ["Form"])
        }
    }

    @Test func malformedCredentialsAre401() async throws {
        try await APITest.run { api in
            for header in ["Basic", "Basic !!!", "Basic " + Data("no-colon".utf8).base64EncodedString(), "Bearer x", "Digest abc"] {
                let reply = try await api.send(.get, "/v3/tags", headers: [.authorization: header])
                #expect(reply.status == 401, "\(header)")
                #expect(reply.errorCode == HeraldError.Code.unauthorized.rawValue)
                #expect(reply.headers[.wwwAuthenticate] != nil)
            }
        }
    }

    @Test func unknownRoutesAre404AndWrongMethodsAre405() async throws {
        try await APITest.run { api in
            let missing = try await api.send(.get, "/v3/nothing")
            #expect(missing.status == 404)
            #expect(missing.errorCode == HeraldError.Code.routeNotFound.rawValue)
            let method = try await api.send(.put, "/v3/devices/\(unknownRegistrationID())")
            #expect(method.status == 405)
            #expect(method.errorCode == HeraldError.Code.methodNotAllowed.rawValue)
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
