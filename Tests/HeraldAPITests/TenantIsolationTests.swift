import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@Suite struct TenantIsolationTests {
    @Test func oneAppCanNeverSeeOrChangeAnothersDevicesAliasesOrTags() async throws {
        try await APITest.run { api in
            let alpha = try await api.createApp("Alpha")
            let beta = try await api.createApp("Beta")
            let device = try await api.registerDevice(alpha, apnsToken: randomAPNsToken())
            try await api.send(
                .post,
                "/v3/devices/\(device.registrationID)",
                auth: alpha.auth,
                json: #"{"tags": {"add": ["secret"]}, "alias": "ceo"}"#
            )

            let get = try await api.send(.get, "/v3/devices/\(device.registrationID)", auth: beta.auth)
            #expect(get.errorCode == HeraldError.Code.deviceNotFound.rawValue)
            let update = try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: beta.auth, json: #"{"alias": "pwned"}"#)
            #expect(update.errorCode == HeraldError.Code.deviceNotFound.rawValue)
            let delete = try await api.send(.delete, "/v3/devices/\(device.registrationID)", auth: beta.auth)
            #expect(delete.errorCode == HeraldError.Code.deviceNotFound.rawValue)
            let tag = try await api.send(
                .post,
                "/v3/tags/secret",
                auth: beta.auth,
                json: #"{"registration_ids": {"remove": ["\#(device.registrationID)"]}}"#
            )
            #expect(tag.errorCode == HeraldError.Code.deviceNotFound.rawValue)
            let member = try await api.send(.get, "/v3/tags/secret/registration_ids/\(device.registrationID)", auth: beta.auth)
            #expect(member.errorCode == HeraldError.Code.deviceNotFound.rawValue)
            #expect(try await api.send(.get, "/v3/aliases/ceo", auth: beta.auth).strings("registration_ids") == [])
            #expect(try await api.send(.get, "/v3/tags", auth: beta.auth).strings("tags") == [])
            try await api.send(.delete, "/v3/aliases/ceo", auth: beta.auth)
            try await api.send(.delete, "/v3/tags/secret", auth: beta.auth)

            // Alpha's data is untouched by all of that.
            let mine = try await api.send(.get, "/v3/devices/\(device.registrationID)", auth: alpha.auth)
            #expect(try mine.string("alias") == "ceo")
            #expect(try mine.strings("tags") == ["secret"])
        }
    }

    @Test func theSameTokenInTwoAppsIsTwoDevices() async throws {
        try await APITest.run { api in
            let alpha = try await api.createApp("Alpha")
            let beta = try await api.createApp("Beta")
            let token = randomAPNsToken()
            let one = try await api.registerDevice(alpha, apnsToken: token)
            let two = try await api.registerDevice(beta, apnsToken: token)
            #expect(one.registrationID != two.registrationID)
        }
    }

    @Test func aMasterSecretOpensOnlyItsOwnApp() async throws {
        try await APITest.run { api in
            let alpha = try await api.createApp("Alpha")
            let beta = try await api.createApp("Beta")
            let mixed = Auth.basic(alpha.appKey, beta.masterSecret)
            #expect(try await api.send(.get, "/v3/tags", auth: mixed).status == 401)
        }
    }
}
