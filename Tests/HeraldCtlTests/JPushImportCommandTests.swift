import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

/// `heraldctl apps create --jpush-app-key` and `heraldctl devices import` against a live server.
@Suite struct JPushImportCommandTests {
    static let key = "d4ee2375846bc30fa51334f5"
    static let secret = "3f045fd404d09a8a1f38d791"

    @Test func anAppIsCreatedWithItsJPushCredentials() async throws {
        try await CtlTest.run { test in
            let missing = try await test.admin("apps", "create", "Shop", "--jpush-app-key", Self.key)
            #expect(missing.status == 64, "\(missing)")
            #expect(try await test.store.api.listApps().isEmpty)

            let created = try await test.heraldctl(
                ["apps", "create", "Shop", "--jpush-app-key", Self.key],
                environment: ["HERALD_ADMIN_TOKEN": CtlTest.adminToken, "JPUSH_MASTER_SECRET": Self.secret]
            )
            #expect(created.status == 0, "\(created)")
            #expect(created.field("app_key") == Self.key)
            #expect(try await test.store.api.authenticateApp(appKey: Self.key, masterSecret: Self.secret) != nil)

            let again = try await test.heraldctl(
                ["apps", "create", "Shop 2", "--jpush-app-key", Self.key, "--jpush-master-secret", Self.secret],
                environment: ["HERALD_ADMIN_TOKEN": CtlTest.adminToken]
            )
            #expect(again.status == 1, "\(again)")
            #expect(again.stderr.hasPrefix("error \(HeraldError.Code.conflict.rawValue): app_key"), "\(again)")
        }
    }

    @Test func aFileIsImportedWithItsRejectedRowsListed() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let file = test.home.appendingPathComponent("devices.csv")
            try Data(
                """
                registration_id,platform,alias,tags
                18071adc030dcba91c0,ios,alice,"vip,beta"
                0900e8d85ef,,,beta
                not-an-id,android,,

                """.utf8
            ).write(to: file)
            let imported = try await test.admin("devices", "import", file.path, "--app", app.app.appKey)
            #expect(imported.status == 0, "\(imported)")
            #expect(imported.field("rows") == "3")
            #expect(imported.field("created") == "2")
            #expect(imported.field("rejected") == "1")
            let rejection = try #require(imported.stdout.split(separator: "\n").first { $0.hasPrefix("4 ") })
            #expect(rejection.contains("not-an-id") && rejection.contains("registration_id: not a registration id"))
            #expect(try await test.device(app, "18071adc030dcba91c0")?.tags.sorted() == ["beta", "vip"])
            #expect(try await test.device(app, "0900e8d85ef")?.platform == .android)

            // Sent again: nothing is written twice.
            let again = try await test.admin("devices", "import", file.path, "--app", app.app.appKey, "--json")
            #expect(again.status == 0, "\(again)")
            #expect(try again.json["unchanged"] as? Int == 2)
            #expect(try again.json["created"] as? Int == 0)

            // NDJSON by default for other extensions; a CSV file said to be NDJSON is refused whole.
            let wrong = try await test.admin("devices", "import", file.path, "--app", app.app.appKey, "--format", "ndjson")
            #expect(wrong.status == 1, "\(wrong)")
            #expect(wrong.stderr.hasPrefix("error \(HeraldError.Code.invalidJSON.rawValue): line 1"), "\(wrong)")
        }
    }
}
