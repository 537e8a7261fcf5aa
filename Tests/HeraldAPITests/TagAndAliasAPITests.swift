import Foundation
import HTTPTypes
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

            #expect(try await api.send(.delete, "/v3/tags/news", auth: app.auth).status == 200)
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
            #expect(try await api.send(.delete, "/v3/aliases/bob", auth: app.auth).status == 200)
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

    /// JPush's `?platform=` on the alias and tag routes: only those platforms' devices are
    /// listed or lose the alias or tag (JPush's `ios` is every Apple platform); an unknown
    /// platform is refused and changes nothing.
    @Test func thePlatformQueryNarrowsAliasAndTagRoutes() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let android = try await api.registerDevice(app, platform: "android")
            let iphone = try await api.registerDevice(app, platform: "ios")
            let mac = try await api.registerDevice(app, platform: "macos")
            for device in [android, iphone, mac] {
                try await api.send(
                    .post,
                    "/v3/devices/\(device.registrationID)",
                    auth: app.auth,
                    json: #"{"alias": "bob", "tags": {"add": ["news"]}}"#
                )
            }
            func alias(_ query: String = "") async throws -> [String] {
                try await api.send(.get, "/v3/aliases/bob\(query)", auth: app.auth).strings("registration_ids")
            }
            func tagged(_ device: TestDevice) async throws -> Bool? {
                try await api.send(.get, "/v3/tags/news/registration_ids/\(device.registrationID)", auth: app.auth).json["result"] as? Bool
            }
            #expect(try await alias("?platform=android") == [android.registrationID])
            #expect(try await alias("?platform=ios") == [iphone.registrationID, mac.registrationID].sorted())
            #expect(try await alias("?platform=macos") == [mac.registrationID])
            #expect(try await alias("?platform=android,ios") == [android, iphone, mac].map(\.registrationID).sorted())
            #expect(try await alias("?platform=") == [android, iphone, mac].map(\.registrationID).sorted())

            for path in ["/v3/aliases/bob?platform=android,symbian", "/v3/tags/news?platform=winphone"] {
                for method in [HTTPRequest.Method.get, .delete] where method == .delete || path.hasPrefix("/v3/aliases") {
                    let refused = try await api.send(method, path, auth: app.auth)
                    #expect(refused.errorCode == HeraldError.Code.invalidField.rawValue, "\(method) \(path): \(refused.body)")
                }
            }
            #expect(try await alias().count == 3)
            #expect(try await tagged(android) == true)

            #expect(try await api.send(.delete, "/v3/aliases/bob?platform=android", auth: app.auth).status == 200)
            #expect(try await alias() == [iphone.registrationID, mac.registrationID].sorted())
            #expect(try await api.send(.delete, "/v3/tags/news?platform=ios", auth: app.auth).status == 200)
            #expect(try await tagged(android) == true)
            #expect(try await tagged(iphone) == false)
            #expect(try await tagged(mac) == false)
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
