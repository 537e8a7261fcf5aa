import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// An app created with the app key and master secret it had at JPush.
@Suite struct JPushCredentialsTests {
    static let jpushKey = "d4ee2375846bc30fa51334f5"
    static let jpushSecret = "3f045fd404d09a8a1f38d791"

    @Test func anAppCreatedWithItsJPushCredentialsPushesWithThemUnchanged() async throws {
        try await APITest.run { api in
            let created = try await api.send(
                .post,
                "/admin/v1/apps",
                auth: .admin,
                json: #"{"name": "From JPush", "app_key": "\#(Self.jpushKey)", "master_secret": "\#(Self.jpushSecret)"}"#
            )
            #expect(created.status == 201)
            #expect(try created.string("app_key") == Self.jpushKey)
            #expect(try created.string("master_secret") == Self.jpushSecret)
            // Stored hashed, as every master secret.
            let rows = try await api.store.sql.query("SELECT master_secret_hash FROM apps")
            for try await hash in rows.decode(Data.self) {
                #expect(Array(hash) == SecretHash.digest(Self.jpushSecret))
            }

            let app = TestApp(appKey: Self.jpushKey, masterSecret: Self.jpushSecret)
            let jpushRID = "18071adc030dcba91c0"
            let imported = try await api.send(
                .post,
                "/admin/v1/apps/\(Self.jpushKey)/devices/import",
                auth: .admin,
                json: #"{"registration_id": "\#(jpushRID)", "platform": "android"}"#,
                headers: [.contentType: "application/x-ndjson"]
            )
            #expect(try imported.json["created"] as? Int == 1)
            let push = try await api.send(
                .post,
                "/v3/push",
                auth: app.auth,
                json: #"{"audience": {"registration_id": ["\#(jpushRID)"]}, "notification": {"alert": "hi"}}"#
            )
            #expect(push.status == 200)
            #expect(try push.string("msg_id").count == Identifiers.msgIDLength)
            let wrong = try await api.send(.post, "/v3/push", auth: .basic(Self.jpushKey, "0f045fd404d09a8a1f38d791"), json: "{}")
            #expect(wrong.status == 401)
            // The device API reads the JPush registration id too.
            let device = try await api.send(.get, "/v3/devices/\(jpushRID)", auth: app.auth)
            #expect(device.status == 200)
            #expect(try device.string("platform") == "android")
        }
    }

    @Test func aKeyAlreadyUsedIsAConflictAndChangesNothing() async throws {
        try await APITest.run { api in
            let body = #"{"name": "A", "app_key": "\#(Self.jpushKey)", "master_secret": "\#(Self.jpushSecret)"}"#
            #expect(try await api.send(.post, "/admin/v1/apps", auth: .admin, json: body).status == 201)
            let again = try await api.send(
                .post,
                "/admin/v1/apps",
                auth: .admin,
                json: #"{"name": "B", "app_key": "\#(Self.jpushKey)", "master_secret": "0123456789abcdef01234567"}"#
            )
            #expect(again.status == 409)
            #expect(again.errorCode == HeraldError.Code.conflict.rawValue)
            let apps = try await api.store.api.listApps()
            #expect(apps.map(\.name) == ["A"])
            // The first app's secret still authenticates; the second's never did.
            #expect(try await api.store.api.authenticateApp(appKey: Self.jpushKey, masterSecret: Self.jpushSecret) != nil)
            #expect(try await api.store.api.authenticateApp(appKey: Self.jpushKey, masterSecret: "0123456789abcdef01234567") == nil)
        }
    }

    @Test func badShapesAreRefusedAndCreateNothing() async throws {
        try await APITest.run { api in
            let cases: [(String, String)] = [
                (#""app_key": "D4EE2375846BC30FA51334F5", "master_secret": "\#(Self.jpushSecret)""#, "app_key"),
                (#""app_key": "d4ee2375846bc30fa51334f", "master_secret": "\#(Self.jpushSecret)""#, "app_key"),
                (#""app_key": "\#(Self.jpushKey)", "master_secret": "3f045fd404d09a8a1f38d7912""#, "master_secret"),
                (#""app_key": "\#(Self.jpushKey)", "master_secret": "3f045fd404d09a8a1f38d79z""#, "master_secret"),
                (#""app_key": 12, "master_secret": "\#(Self.jpushSecret)""#, "app_key"),
                (#""app_key": null, "master_secret": "\#(Self.jpushSecret)""#, "app_key"),
                (#""master_secret": null"#, "master_secret"),
            ]
            for (fields, field) in cases {
                let reply = try await api.send(.post, "/admin/v1/apps", auth: .admin, json: #"{"name": "x", \#(fields)}"#)
                #expect(reply.status == 400, "\(fields)")
                #expect(reply.errorCode == HeraldError.Code.invalidField.rawValue, "\(fields)")
                #expect(reply.errorMessage?.hasPrefix(field) == true, "\(fields): \(reply.errorMessage ?? "")")
            }
            #expect(try await api.store.api.listApps().isEmpty)
            // Herald's own 40-character secrets may be kept too (moving between Herald servers).
            let herald = try await api.send(
                .post,
                "/admin/v1/apps",
                auth: .admin,
                json: #"{"name": "y", "app_key": "\#(Self.jpushKey)", "master_secret": "\#(String(repeating: "ab", count: 20))"}"#
            )
            #expect(herald.status == 201)
        }
    }

    /// Either credential alone is kept, and the other made as for any app.
    @Test func aKeyOrASecretAloneIsKeptAndTheOtherMade() async throws {
        try await APITest.run { api in
            let keyOnly = try await api.send(.post, "/admin/v1/apps", auth: .admin, json: #"{"name": "k", "app_key": "\#(Self.jpushKey)"}"#)
            #expect(keyOnly.status == 201, "\(keyOnly.body)")
            #expect(try keyOnly.string("app_key") == Self.jpushKey)
            let made = try keyOnly.string("master_secret")
            #expect(try await api.store.api.authenticateApp(appKey: Self.jpushKey, masterSecret: made) != nil)

            let secretOnly = try await api.send(
                .post,
                "/admin/v1/apps",
                auth: .admin,
                json: #"{"name": "s", "master_secret": "\#(Self.jpushSecret)"}"#
            )
            #expect(secretOnly.status == 201, "\(secretOnly.body)")
            #expect(try secretOnly.string("master_secret") == Self.jpushSecret)
            let key = try secretOnly.string("app_key")
            #expect(key != Self.jpushKey)
            #expect(try await api.store.api.authenticateApp(appKey: key, masterSecret: Self.jpushSecret) != nil)
        }
    }
}
