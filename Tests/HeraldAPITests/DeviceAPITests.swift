import Foundation
import HeraldCore
import HeraldTestSupport
import PostgresNIO
import Testing

@Suite struct DeviceAPITests {
    @Test func registeringAgainWithTheCurrentSecretKeepsTheRegistration() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let token = randomAPNsToken()
            let first = try await api.send(
                .post,
                "/v3/devices",
                json: #"{"app_key": "\#(app.appKey)", "platform": "ios", "apns_token": "\#(token)"}"#
            )
            #expect(first.status == 201)
            let id = try first.string("registration_id")
            // Same token, other case, with the installation's credentials: the same device.
            let again = try await api.send(
                .post,
                "/v3/devices",
                auth: .basic(id, try first.string("device_secret")),
                json: #"{"app_key": "\#(app.appKey)", "platform": "ios", "apns_token": "\#(token.uppercased())"}"#
            )
            #expect(again.status == 200)
            #expect(try again.string("registration_id") == id)

            // The new secret works, the old one no longer does.
            let old = try await api.send(.get, "/v3/devices/\(id)", auth: .basic(id, try first.string("device_secret")))
            #expect(old.status == 401)
            let current = try await api.send(.get, "/v3/devices/\(id)", auth: .basic(id, try again.string("device_secret")))
            #expect(current.status == 200)
            #expect(try current.string("apns_token") == token)

            let rows = try await api.store.sql.query("SELECT count(*) FROM devices")
            for try await count in rows.decode(Int.self) { #expect(count == 1) }
        }
    }

    @Test func knowingADevicesTokenDoesNotTakeOverItsRegistration() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let token = randomAPNsToken()
            let victim = try await api.registerDevice(app, apnsToken: token)
            _ = try await api.send(
                .post,
                "/v3/devices/\(victim.registrationID)",
                auth: app.auth,
                json: #"{"alias": "alice", "tags": {"add": ["vip"]}}"#
            )

            // The app key is public: a stranger registers the victim's token without its secret.
            let stranger = try await api.send(
                .post,
                "/v3/devices",
                json: #"{"app_key": "\#(app.appKey)", "platform": "ios", "apns_token": "\#(token)"}"#
            )
            #expect(stranger.status == 201)
            #expect(try stranger.string("registration_id") != victim.registrationID)

            // The victim's registration and secret still work; its alias and tags stay with it.
            let victimView = try await api.send(.get, "/v3/devices/\(victim.registrationID)", auth: .basic(victim.registrationID, victim.secret))
            #expect(victimView.status == 200)
            #expect(victimView.body.contains("alice") && victimView.body.contains("vip"))
            // The token belongs to the installation that registered it last.
            #expect(!victimView.body.contains(token))
            let strangerView = try await api.send(
                .get,
                "/v3/devices/\(try stranger.string("registration_id"))",
                auth: .basic(try stranger.string("registration_id"), try stranger.string("device_secret"))
            )
            #expect(!strangerView.body.contains("alice") && !strangerView.body.contains("vip"))
            // The stranger's secret is no key to the victim's registration.
            let crossed = try await api.send(
                .get,
                "/v3/devices/\(victim.registrationID)",
                auth: .basic(victim.registrationID, try stranger.string("device_secret"))
            )
            #expect(crossed.status == 401)

            // The real installation takes its token back with its own credentials.
            let back = try await api.send(
                .post,
                "/v3/devices",
                auth: .basic(victim.registrationID, victim.secret),
                json: #"{"app_key": "\#(app.appKey)", "platform": "ios", "apns_token": "\#(token)"}"#
            )
            #expect(back.status == 200)
            #expect(try back.string("registration_id") == victim.registrationID)
            let restored = try await api.send(
                .get,
                "/v3/devices/\(victim.registrationID)",
                auth: .basic(victim.registrationID, try back.string("device_secret"))
            )
            #expect(try restored.string("apns_token") == token)
        }
    }

    @Test func aWrongProofIsRefusedAndChangesNothing() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let other = try await api.createApp()
            let token = randomAPNsToken()
            let device = try await api.registerDevice(app, apnsToken: token)
            let foreign = try await api.registerDevice(other)
            let body = #"{"app_key": "\#(app.appKey)", "platform": "ios", "apns_token": "\#(randomAPNsToken())"}"#
            for auth: Auth in [
                .basic(device.registrationID, (device.secret.first == "0" ? "1" : "0") + device.secret.dropFirst()),
                .basic(foreign.registrationID, foreign.secret),
                .basic("nope", "nope"),
                .bearer("x"),
            ] {
                let reply = try await api.send(.post, "/v3/devices", auth: auth, json: body)
                #expect(reply.status == 401, "\(reply.body)")
                #expect(reply.errorCode == HeraldError.Code.unauthorized.rawValue)
            }
            let rows = try await api.store.sql.query("SELECT count(*) FROM devices")
            for try await count in rows.decode(Int.self) { #expect(count == 2) }
            let view = try await api.send(.get, "/v3/devices/\(device.registrationID)", auth: .basic(device.registrationID, device.secret))
            #expect(try view.string("apns_token") == token)
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
            let cases: [(String, HeraldError.Code, String)] = [
                (#"{"app_key": "\#(app.appKey)", "platform": "symbian"}"#, .invalidField, "platform"),
                (#"{"app_key": "\#(app.appKey)"}"#, .missingField, "platform"),
                (#"{"platform": "ios"}"#, .missingField, "app_key"),
                (#"{"app_key": "\#(app.appKey)", "platform": "android", "apns_token": "\#(randomAPNsToken())"}"#, .invalidField, "apns_token"),
                (#"{"app_key": "\#(app.appKey)", "platform": "ios", "apns_token": "nothex"}"#, .invalidField, "apns_token"),
                (#"{"app_key": "\#(app.appKey)", "platform": "ios", "apns_environment": "dev"}"#, .invalidField, "apns_environment"),
                (#"{"app_key": "\#(app.appKey)", "platform": 7}"#, .invalidField, "platform"),
                (#"{"app_key": "\#(app.appKey)", "platform": "ios", "colour": "red"}"#, .unsupportedKey, "colour"),
                (#"{"app_key": "\#(String(repeating: "a", count: 24))", "platform": "ios"}"#, .appNotFound, "app_key"),
                (#"[1, 2]"#, .invalidJSON, "body"),
                (#"{"app_key": "#, .invalidJSON, "body"),
            ]
            for (body, code, field) in cases {
                let reply = try await api.send(.post, "/v3/devices", json: body)
                #expect(reply.errorCode == code.rawValue, "\(body) → \(reply.body)")
                #expect(reply.errorMessage?.hasPrefix(field) == true, "\(body) → \(reply.body)")
                #expect((400..<500).contains(reply.status))
            }
            let rows = try await api.store.sql.query("SELECT count(*) FROM devices")
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
            #expect(theirs.errorCode == HeraldError.Code.forbidden.rawValue)
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

    /// JPush's device API keeps a mobile number per device (`set_devicemobile` in its Python
    /// client): set, shown, cleared, and a bad one refused without changing anything.
    @Test func aDevicesMobileIsSetShownAndCleared() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app, platform: "android")
            let path = "/v3/devices/\(device.registrationID)"
            #expect(try await api.send(.get, path, auth: app.auth).json["mobile"] is NSNull)
            let set = try await api.send(.post, path, auth: app.auth, json: #"{"mobile": "13800138000", "alias": "m"}"#)
            #expect(set.status == 200)
            // A mainland number as JPush keeps it is stored in E.164.
            #expect(try set.string("mobile") == "+8613800138000")
            #expect(try await api.send(.get, path, auth: app.auth).string("mobile") == "+8613800138000")

            for bad in [
                #""138-0013-8000""#, #""+""#, #""123456789012345678901""#, "13800138000", #""+0123456789""#, #""+1234567""#,
                #""23800138000""#,
            ] {
                let reply = try await api.send(.post, path, auth: app.auth, json: #"{"mobile": \#(bad), "alias": "changed"}"#)
                #expect(reply.status == 400, "\(bad)")
                #expect(reply.errorCode == HeraldError.Code.invalidField.rawValue, "\(bad): \(reply.body)")
            }
            let unchanged = try await api.send(.get, path, auth: app.auth)
            #expect(try unchanged.string("mobile") == "+8613800138000")
            #expect(try unchanged.string("alias") == "m")

            #expect(try await api.send(.post, path, auth: device.auth, json: #"{"mobile": "+8613900139000"}"#).string("mobile") == "+8613900139000")
            #expect(try await api.send(.post, path, auth: device.auth, json: #"{"mobile": "0044201234567"}"#).string("mobile") == "+44201234567")
            #expect(try await api.send(.post, path, auth: app.auth, json: #"{"mobile": ""}"#).json["mobile"] is NSNull)
            try await api.send(.post, path, auth: app.auth, json: #"{"mobile": "1"}"#)
            #expect(try await api.send(.post, path, auth: app.auth, json: #"{"mobile": null}"#).json["mobile"] is NSNull)
        }
    }

    @Test func deletedDevicesAreGone() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app)
            #expect(try await api.send(.delete, "/v3/devices/\(device.registrationID)", auth: app.auth).status == 204)
            #expect(
                try await api.send(.get, "/v3/devices/\(device.registrationID)", auth: app.auth).errorCode == HeraldError.Code.deviceNotFound.rawValue
            )
            #expect(
                try await api.send(.delete, "/v3/devices/\(device.registrationID)", auth: app.auth).errorCode
                    == HeraldError.Code.deviceNotFound.rawValue
            )
        }
    }
}
