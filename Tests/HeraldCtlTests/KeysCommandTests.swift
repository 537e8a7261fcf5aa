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

/// `heraldctl audit`: the log listed, and a row altered in PostgreSQL named by `verify`.
@Suite struct AuditCommandTests {
    @Test func verifyNamesARowAlteredBehindHeraldsBack() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let asApp = ["HERALD_APP_KEY": app.app.appKey, "HERALD_MASTER_SECRET": app.masterSecret]
            for name in ["one", "two", "three"] {
                let created = try await test.heraldctl(["keys", "create", "--name", name, "--scope", "send"], environment: asApp)
                #expect(created.status == 0, "\(created)")
            }
            let admin = ["HERALD_ADMIN_TOKEN": CtlTest.adminToken]
            let listed = try await test.heraldctl(["audit", "list", "--app", app.app.appKey], environment: admin)
            #expect(listed.status == 0 && listed.stdout.components(separatedBy: "POST /v3/keys").count == 4, "\(listed)")
            let intact = try await test.heraldctl(["audit", "verify"], environment: admin)
            #expect(intact.status == 0 && intact.stdout.hasPrefix("intact:"), "\(intact)")

            let rows = try await test.store.sql.query("SELECT id FROM audit_log WHERE action = 'POST /v3/keys' ORDER BY id")
            var ids: [Int64] = []
            for try await id in rows.decode(Int64.self) { ids.append(id) }
            try await test.store.sql.query("ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only")
            try await test.store.sql.query("UPDATE audit_log SET status = 200 WHERE id = \(ids[1])")
            try await test.store.sql.query("ALTER TABLE audit_log ENABLE TRIGGER audit_log_append_only")
            let broken = try await test.heraldctl(["audit", "verify"], environment: admin)
            #expect(broken.status == 1 && broken.stdout.contains("BROKEN at entry \(ids[1])"), "\(broken)")
        }
    }
}
