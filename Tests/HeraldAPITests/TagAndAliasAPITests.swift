import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@Suite struct TagAndAliasAPITests {
    @Test func devicesAreAddedToAndRemovedFromATagInBulk() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let a = try await api.registerDevice(app)
            let b = try await api.registerDevice(app)
            let added = try await api.send(
                .post,
                "/v3/tags/news",
                auth: app.auth,
                json: #"{"registration_ids": {"add": ["\#(a.registrationID)", "\#(b.registrationID)"]}}"#
            )
            #expect(try added.json["added"] as? Int == 2)
            #expect(try await api.send(.get, "/v3/tags/news/registration_ids/\(a.registrationID)", auth: app.auth).json["result"] as? Bool == true)

            let removed = try await api.send(
                .post,
                "/v3/tags/news",
                auth: app.auth,
                json: #"{"registration_ids": {"remove": ["\#(a.registrationID)"]}}"#
            )
            #expect(try removed.json["removed"] as? Int == 1)
            #expect(try await api.send(.get, "/v3/tags/news/registration_ids/\(a.registrationID)", auth: app.auth).json["result"] as? Bool == false)
            #expect(try await api.send(.get, "/v3/tags", auth: app.auth).strings("tags") == ["news"])

            #expect(try await api.send(.delete, "/v3/tags/news", auth: app.auth).status == 204)
            #expect(try await api.send(.get, "/v3/tags", auth: app.auth).strings("tags") == [])
        }
    }

    @Test func anUnknownRegistrationIDFailsTheWholeBulkCall() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let known = try await api.registerDevice(app)
            let unknown = unknownRegistrationID()
            let reply = try await api.send(
                .post,
                "/v3/tags/news",
                auth: app.auth,
                json: #"{"registration_ids": {"add": ["\#(known.registrationID)", "\#(unknown)"]}}"#
            )
            #expect(reply.status == 404)
            #expect(reply.errorCode == HeraldError.Code.deviceNotFound.rawValue)
            #expect(reply.errorMessage?.contains(unknown) == true)
            #expect(try await api.send(.get, "/v3/tags", auth: app.auth).strings("tags") == [])
        }
    }

    @Test func tagsListEveryDistinctTagInOrder() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            for tags in [#"["b", "a"]"#, #"["c", "a"]"#] {
                let device = try await api.registerDevice(app)
                try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: app.auth, json: #"{"tags": {"add": \#(tags)}}"#)
            }
            #expect(try await api.send(.get, "/v3/tags", auth: app.auth).strings("tags") == ["a", "b", "c"])
        }
    }

    @Test func deletingAnAliasClearsItFromEveryDevice() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let a = try await api.registerDevice(app)
            let b = try await api.registerDevice(app)
            for device in [a, b] {
                try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: app.auth, json: #"{"alias": "bob"}"#)
            }
            #expect(
                try await api.send(.get, "/v3/aliases/bob", auth: app.auth).strings("registration_ids")
                    == [a.registrationID, b.registrationID].sorted()
            )
            #expect(try await api.send(.delete, "/v3/aliases/bob", auth: app.auth).status == 204)
            #expect(try await api.send(.get, "/v3/aliases/bob", auth: app.auth).strings("registration_ids") == [])
            #expect(try await api.send(.get, "/v3/devices/\(a.registrationID)", auth: app.auth).json["alias"] is NSNull)
        }
    }

    @Test func tagsAndAliasesArePercentDecodedFromThePath() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app)
            let added = try await api.send(
                .post,
                "/v3/tags/new%20users%2F%CE%B2",
                auth: app.auth,
                json: #"{"registration_ids": {"add": ["\#(device.registrationID)"]}}"#
            )
            #expect(added.status == 200)
            #expect(try await api.send(.get, "/v3/tags", auth: app.auth).strings("tags") == ["new users/β"])
            let member = try await api.send(.get, "/v3/tags/new%20users%2F%CE%B2/registration_ids/\(device.registrationID)", auth: app.auth)
            #expect(try member.json["result"] as? Bool == true)

            try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: app.auth, json: #"{"alias": "a b"}"#)
            #expect(try await api.send(.get, "/v3/aliases/a%20b", auth: app.auth).strings("registration_ids") == [device.registrationID])
            #expect(try await api.send(.get, "/v3/aliases/a%zz", auth: app.auth).errorCode == HeraldError.Code.invalidField.rawValue)
        }
    }

    @Test func membershipOfAnUnknownDeviceIs404() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let reply = try await api.send(.get, "/v3/tags/x/registration_ids/\(unknownRegistrationID())", auth: app.auth)
            #expect(reply.errorCode == HeraldError.Code.deviceNotFound.rawValue)
        }
    }
}
