import Foundation
import HeraldCore
import HeraldTestSupport
import PostgresNIO
import Testing

@Suite struct AdminAPITests {
    @Test func createdAppsAreListedAndTheirSecretIsShownOnce() async throws {
        try await APITest.run { api in
            let created = try await api.send(.post, "/admin/v1/apps", auth: .admin, json: #"{"name": "Shop"}"#)
            #expect(created.status == 201)
            let appKey = try created.string("app_key")
            #expect(appKey.count == 24)
            #expect(try created.string("master_secret").count == 40)

            let list = try await api.send(.get, "/admin/v1/apps", auth: .admin)
            #expect(list.status == 200)
            let apps = try #require(try list.json["apps"] as? [[String: Any]])
            #expect(apps.map { $0["app_key"] as? String } == [appKey])
            #expect(apps[0]["master_secret"] == nil)
            #expect(apps[0].keys.contains("apns"))

            let one = try await api.send(.get, "/admin/v1/apps/\(appKey)", auth: .admin)
            #expect(try one.string("name") == "Shop")
            #expect(!one.body.contains("master_secret"))
        }
    }

    @Test func theAdminAPINeedsTheAdminToken() async throws {
        try await APITest.run { api in
            let none = try await api.send(.get, "/admin/v1/apps")
            #expect(none.status == 401)
            #expect(none.errorCode == HeraldError.Code.unauthorized.rawValue)
            let wrong = try await api.send(.post, "/admin/v1/apps", auth: .bearer("wrong-token"), json: #"{"name": "x"}"#)
            #expect(wrong.status == 401)
            let apps = try await api.store.api.listApps()
            #expect(apps.isEmpty)
            // An app's own credentials are not admin credentials.
            let app = try await api.createApp()
            #expect(try await api.send(.get, "/admin/v1/apps", auth: app.auth).status == 401)
        }
    }

    @Test func deletingAnAppDeletesItsDevices() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app, apnsToken: randomAPNsToken())
            #expect(try await api.send(.delete, "/admin/v1/apps/\(app.appKey)", auth: .admin).status == 204)
            #expect(try await api.send(.get, "/admin/v1/apps/\(app.appKey)", auth: .admin).errorCode == HeraldError.Code.appNotFound.rawValue)
            #expect(try await api.send(.delete, "/admin/v1/apps/\(app.appKey)", auth: .admin).status == 404)
            #expect(try await api.send(.get, "/v3/devices/\(device.registrationID)", auth: device.auth).status == 401)
            let rows = try await api.store.sql.query("SELECT count(*) FROM devices")
            for try await count in rows.decode(Int.self) { #expect(count == 0) }
        }
    }

    @Test func appNamesAreValidated() async throws {
        try await APITest.run { api in
            let empty = try await api.send(.post, "/admin/v1/apps", auth: .admin, json: #"{"name": "  "}"#)
            #expect(empty.status == 400)
            #expect(empty.errorCode == HeraldError.Code.invalidField.rawValue)
            let long = try await api.send(.post, "/admin/v1/apps", auth: .admin, json: #"{"name": "\#(String(repeating: "x", count: 101))"}"#)
            #expect(long.errorCode == HeraldError.Code.limitExceeded.rawValue)
            let missing = try await api.send(.post, "/admin/v1/apps", auth: .admin, json: "{}")
            #expect(missing.errorCode == HeraldError.Code.missingField.rawValue)
            #expect(missing.errorMessage == "name: is required")
            #expect(try await api.store.api.listApps().isEmpty)
        }
    }

    @Test func credentialsAServerSendingToItsSandboxDoesNotUseSaySo() async throws {
        try await APITest.run(apnsDestination: .sandbox) { api in
            let app = try await api.createApp()
            let body = try JSONSerialization.data(withJSONObject: [
                "type": "token", "key_id": "ABC123DEFG", "team_id": "TEAM123456", "bundle_id": "com.example.app",
                "environment": "production", "private_key": TestCredentials.p8(),
            ])
            let set = try await api.send(.put, "/admin/v1/apps/\(app.appKey)/apns", auth: .admin, json: String(decoding: body, as: UTF8.self))
            #expect(set.status == 200)
            for reply in [set, try await api.send(.get, "/admin/v1/apps/\(app.appKey)/apns", auth: .admin)] {
                #expect(try reply.string("sent_to") == "sandbox")
                #expect(try reply.string("note").contains("these credentials are not used"))
                #expect(try reply.string("note").contains("HERALD_APNS_SANDBOX=off"))
            }
            let shown = try await api.send(.get, "/admin/v1/apps/\(app.appKey)", auth: .admin)
            #expect(shown.body.contains(#""sent_to":"sandbox""#))
        }
    }

    @Test func tokenCredentialsAreStoredSealedAndNeverReturned() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let p8 = TestCredentials.p8()
            let body = try JSONSerialization.data(withJSONObject: [
                "type": "token", "key_id": "ABC123DEFG", "team_id": "TEAM123456", "bundle_id": "com.example.app",
                "environment": "sandbox", "private_key": p8,
            ])
            let set = try await api.send(.put, "/admin/v1/apps/\(app.appKey)/apns", auth: .admin, json: String(decoding: body, as: UTF8.self))
            #expect(set.status == 200)
            #expect(try set.string("key_id") == "ABC123DEFG")
            #expect(try set.string("bundle_id") == "com.example.app")
            #expect(!set.body.contains("PRIVATE KEY"))

            let get = try await api.send(.get, "/admin/v1/apps/\(app.appKey)/apns", auth: .admin)
            #expect(try get.string("type") == "token")
            #expect(try get.string("sent_to") == "apple")
            #expect(!get.body.contains("\"note\""))
            let listed = try await api.send(.get, "/admin/v1/apps", auth: .admin)
            #expect(listed.body.contains("TEAM123456"))
            #expect(!listed.body.contains("PRIVATE KEY"))

            // At rest: sealed, not PEM; and it opens back to the same key.
            let rows = try await api.store.sql.query("SELECT apns_credentials FROM apps")
            for try await sealed in rows.decode(Data.self) {
                #expect(!String(decoding: sealed, as: UTF8.self).contains("PRIVATE KEY"))
            }
            let opened = try await api.store.api.apns.apnsCredentials(appKey: app.appKey)
            #expect(opened?.auth == .token(keyID: "ABC123DEFG", teamID: "TEAM123456", privateKeyPEM: p8))

            #expect(try await api.send(.delete, "/admin/v1/apps/\(app.appKey)/apns", auth: .admin).status == 204)
            #expect(
                try await api.send(.get, "/admin/v1/apps/\(app.appKey)/apns", auth: .admin).errorCode
                    == HeraldError.Code.apnsCredentialsNotFound.rawValue
            )
        }
    }

    @Test func aKeyThatDoesNotParseIsA422AndChangesNothing() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let reply = try await api.send(
                .put,
                "/admin/v1/apps/\(app.appKey)/apns",
                auth: .admin,
                json:
                    #"{"type": "token", "key_id": "ABC123DEFG", "team_id": "TEAM123456", "bundle_id": "com.example.app", "environment": "production", "private_key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"}"#
            )
            #expect(reply.status == 422)
            #expect(reply.errorCode == HeraldError.Code.invalidAPNsCredentials.rawValue)
            #expect(reply.errorMessage?.contains("private_key") == true)
            #expect(try await api.store.api.apns.apnsCredentials(appKey: app.appKey) == nil)
        }
    }

    @Test func certificateCredentialsAreValidatedOnUpload() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let (certificate, key) = try TestCredentials.certificate()
            func upload(_ certificate: String, _ key: String) async throws -> Reply {
                let body = try JSONSerialization.data(withJSONObject: [
                    "type": "certificate", "bundle_id": "com.example.app", "environment": "production",
                    "certificate": certificate, "private_key": key,
                ])
                return try await api.send(.put, "/admin/v1/apps/\(app.appKey)/apns", auth: .admin, json: String(decoding: body, as: UTF8.self))
            }
            let mismatched = try await upload(certificate, TestCredentials.p8())
            #expect(mismatched.status == 422)
            #expect(mismatched.errorMessage == "private_key: does not belong to the certificate")

            let good = try await upload(certificate, key)
            #expect(good.status == 200)
            #expect(try good.string("type") == "certificate")
            #expect(try good.string("certificate_subject").contains("Apple Push Services"))
            #expect(try good.json["certificate_expires_at"] is String)
        }
    }

    @Test func apnsUploadsWithMissingOrWrongFieldsNameTheField() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let noTeam = try await api.send(
                .put,
                "/admin/v1/apps/\(app.appKey)/apns",
                auth: .admin,
                json: #"{"type": "token", "key_id": "ABC123DEFG", "bundle_id": "a.b", "environment": "production", "private_key": "x"}"#
            )
            #expect(noTeam.errorCode == HeraldError.Code.missingField.rawValue)
            #expect(noTeam.errorMessage?.hasPrefix("team_id") == true)
            let badEnvironment = try await api.send(
                .put,
                "/admin/v1/apps/\(app.appKey)/apns",
                auth: .admin,
                json:
                    #"{"type": "token", "key_id": "ABC123DEFG", "team_id": "TEAM123456", "bundle_id": "a.b", "environment": "staging", "private_key": "x"}"#
            )
            #expect(badEnvironment.errorMessage == "environment: must be production or sandbox")
            let unknownApp = try await api.send(
                .put,
                "/admin/v1/apps/\(String(repeating: "0", count: 24))/apns",
                auth: .admin,
                json:
                    #"{"type": "token", "key_id": "ABC123DEFG", "team_id": "TEAM123456", "bundle_id": "a.b", "environment": "production", "private_key": "x"}"#
            )
            #expect(unknownApp.errorCode == HeraldError.Code.appNotFound.rawValue)
        }
    }
}
