import Foundation
import HeraldTestSupport
import PostgresNIO
import Testing

@Suite struct DeviceAPITests {
    @Test func registeringTheSameTokenAgainReturnsTheSameRegistrationID() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let token = randomAPNsToken()
            let first = try await api.send(
                .post,
                "/v3/devices",
                json: #"{"app_key": "\#(app.appKey)", "platform": "ios", "apns_token": "\#(token)"}"#
            )
            #expect(first.status == 201)
            // Same token, other case: still the same device.
            let again = try await api.send(
                .post,
                "/v3/devices",
                json: #"{"app_key": "\#(app.appKey)", "platform": "ios", "apns_token": "\#(token.uppercased())"}"#
            )
            #expect(again.status == 200)
            #expect(try again.string("registration_id") == first.string("registration_id"))

            // The new secret works, the old one no longer does.
            let id = try first.string("registration_id")
            let old = try await api.send(.get, "/v3/devices/\(id)", auth: .basic(id, try first.string("device_secret")))
            #expect(old.status == 401)
            let current = try await api.send(.get, "/v3/devices/\(id)", auth: .basic(id, try again.string("device_secret")))
            #expect(current.status == 200)
            #expect(try current.string("apns_token") == token)

            let rows = try await api.store.client.query("SELECT count(*) FROM devices")
            for try await count in rows.decode(Int.self) { #expect(count == 1) }
        }
    }

    @Test func devicesWithoutATokenGetANewRegistrationEachTime() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let one = try await api.registerDevice(app, platform: "android")
            let two = try await api.registerDevice(app, platform: "android")
            #expect(one.registrationID != two.registrationID)
        }
    }

    @Test func registrationRejectsBadInputAndStoresNothing() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let cases: [(String, Int, String)] = [
                (#"{"app_key": "\#(app.appKey)", "platform": "symbian"}"#, 1002, "platform"),
                (#"{"app_key": "\#(app.appKey)"}"#, 1002, "platform"),
                (#"{"platform": "ios"}"#, 1002, "app_key"),
                (#"{"app_key": "\#(app.appKey)", "platform": "android", "apns_token": "\#(randomAPNsToken())"}"#, 1002, "apns_token"),
                (#"{"app_key": "\#(app.appKey)", "platform": "ios", "apns_token": "nothex"}"#, 1002, "apns_token"),
                (#"{"app_key": "\#(app.appKey)", "platform": "ios", "apns_environment": "dev"}"#, 1002, "apns_environment"),
                (#"{"app_key": "\#(app.appKey)", "platform": 7}"#, 1002, "platform"),
                (#"{"app_key": "\#(app.appKey)", "platform": "ios", "colour": "red"}"#, 1001, "colour"),
                (#"{"app_key": "\#(String(repeating: "a", count: 24))", "platform": "ios"}"#, 1006, "app_key"),
                (#"[1, 2]"#, 1001, "body"),
                (#"{"app_key": "#, 1001, "body"),
            ]
            for (body, code, field) in cases {
                let reply = try await api.send(.post, "/v3/devices", json: body)
                #expect(reply.errorCode == code, "\(body) → \(reply.body)")
                #expect(reply.errorMessage?.hasPrefix(field) == true, "\(body) → \(reply.body)")
                #expect((400..<500).contains(reply.status))
            }
            let rows = try await api.store.client.query("SELECT count(*) FROM devices")
            for try await count in rows.decode(Int.self) { #expect(count == 0) }
        }
    }

    @Test func operatorsSetAliasAndTagsAndReadThemBack() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app, apnsToken: randomAPNsToken())
            let updated = try await api.send(
                .post,
                "/v3/devices/\(device.registrationID)",
                auth: app.auth,
                json: #"{"tags": {"add": ["vip", "beta", "vip"]}, "alias": "alice"}"#
            )
            #expect(updated.status == 200)
            #expect(try updated.strings("tags") == ["beta", "vip"])
            #expect(try updated.string("alias") == "alice")

            let removed = try await api.send(
                .post,
                "/v3/devices/\(device.registrationID)",
                auth: app.auth,
                json: #"{"tags": {"remove": ["beta"]}, "alias": ""}"#
            )
            #expect(try removed.strings("tags") == ["vip"])
            #expect(try removed.json["alias"] is NSNull)

            try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: app.auth, json: #"{"alias": "bob"}"#)
            let cleared = try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: app.auth, json: #"{"tags": "", "alias": null}"#)
            #expect(try cleared.strings("tags") == [])
            #expect(try cleared.json["alias"] is NSNull)
        }
    }

    @Test func aDeviceManagesItselfButNoOtherDevice() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let me = try await api.registerDevice(app)
            let other = try await api.registerDevice(app)
            let mine = try await api.send(
                .post,
                "/v3/devices/\(me.registrationID)",
                auth: me.auth,
                json: #"{"tags": {"add": ["sdk"]}, "alias": "me"}"#
            )
            #expect(mine.status == 200)
            let theirs = try await api.send(.post, "/v3/devices/\(other.registrationID)", auth: me.auth, json: #"{"alias": "hijack"}"#)
            #expect(theirs.status == 403)
            #expect(theirs.errorCode == 1004)
            #expect(try await api.send(.get, "/v3/devices/\(other.registrationID)", auth: me.auth).status == 403)
            let check = try await api.send(.get, "/v3/devices/\(other.registrationID)", auth: app.auth)
            #expect(try check.json["alias"] is NSNull)
            // A device can't use the operator routes.
            #expect(try await api.send(.get, "/v3/tags", auth: me.auth).status == 401)
        }
    }

    @Test func tokensCanBeUpdatedClearedAndMoveToTheLatestDevice() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let token = randomAPNsToken()
            let old = try await api.registerDevice(app, apnsToken: token)
            let new = try await api.registerDevice(app)
            let moved = try await api.send(
                .post,
                "/v3/devices/\(new.registrationID)",
                auth: new.auth,
                json: #"{"apns_token": "\#(token)", "apns_environment": "sandbox"}"#
            )
            #expect(try moved.string("apns_token") == token)
            #expect(try moved.string("apns_environment") == "sandbox")
            let previous = try await api.send(.get, "/v3/devices/\(old.registrationID)", auth: app.auth)
            #expect(try previous.json["apns_token"] is NSNull)
            let cleared = try await api.send(.post, "/v3/devices/\(new.registrationID)", auth: new.auth, json: #"{"apns_token": null}"#)
            #expect(try cleared.json["apns_token"] is NSNull)
        }
    }

    @Test func deletedDevicesAreGone() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app)
            #expect(try await api.send(.delete, "/v3/devices/\(device.registrationID)", auth: app.auth).status == 204)
            #expect(try await api.send(.get, "/v3/devices/\(device.registrationID)", auth: app.auth).errorCode == 1007)
            #expect(try await api.send(.delete, "/v3/devices/\(device.registrationID)", auth: app.auth).errorCode == 1007)
        }
    }
}
