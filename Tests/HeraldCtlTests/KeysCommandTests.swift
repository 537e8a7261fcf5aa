import Foundation
import HeraldTestSupport
import Testing

/// `heraldctl keys`: create, list, rotate and revoke, an app's keys and the admin API's.
@Suite struct KeysCommandTests {
    @Test func aKeyIsCreatedListedRotatedAndRevoked() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let asApp = ["HERALD_APP_KEY": app.app.appKey, "HERALD_MASTER_SECRET": app.masterSecret]
            let created = try await test.heraldctl(
                ["keys", "create", "--name", "reporting", "--scope", "reports:read,keys", "--range", "127.0.0.0/8"],
                environment: asApp
            )
            #expect(created.status == 0, "\(created)")
            let keyID = try #require(created.field("key_id"))
            let secret = try #require(created.field("secret")?.split(separator: " ").first.map(String.init))
            #expect(secret.hasPrefix(keyID + "_"))
            #expect(created.field("scopes") == "reports:read,keys")

            // The key itself is credentials heraldctl takes as the app's.
            let asKey = ["HERALD_APP_KEY": app.app.appKey, "HERALD_MASTER_SECRET": secret]
            let listed = try await test.heraldctl(["keys", "list"], environment: asKey)
            #expect(listed.status == 0, "\(listed)")
            #expect(listed.stdout.contains(keyID) && listed.stdout.contains("reporting") && listed.stdout.contains("active"), "\(listed)")

            let rotated = try await test.heraldctl(["keys", "rotate", keyID], environment: asKey)
            #expect(rotated.status == 0, "\(rotated)")
            let next = try #require(rotated.field("secret")?.split(separator: " ").first.map(String.init))
            #expect(rotated.stdout.contains("heraldctl keys revoke \(keyID)"))
            let revoked = try await test.heraldctl(
                ["keys", "revoke", keyID],
                environment: ["HERALD_APP_KEY": app.app.appKey, "HERALD_MASTER_SECRET": next]
            )
            #expect(revoked.status == 0 && revoked.stdout == "revoked \(keyID)\n", "\(revoked)")
            let refused = try await test.heraldctl(["keys", "list"], environment: asKey)
            #expect(refused.status != 0 && refused.stderr.contains("revoked"), "\(refused)")

            let admin = try await test.heraldctl(
                ["keys", "create", "--admin", "--name", "deploy"],
                environment: ["HERALD_ADMIN_TOKEN": CtlTest.adminToken]
            )
            #expect(admin.status == 0 && admin.field("key_id")?.hasPrefix("hka_") == true, "\(admin)")
            let scopeless = try await test.heraldctl(["keys", "create", "--name", "x"], environment: asApp)
            #expect(scopeless.status == 64, "\(scopeless)")
        }
    }
}
