import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

/// `heraldctl apps` against a live server.
@Suite struct AppsCommandTests {
    @Test func appsAreCreatedListedShownAndDeleted() async throws {
        try await CtlTest.run { test in
            let created = try await test.admin("apps", "create", "Shop")
            #expect(created.status == 0, "\(created)")
            let appKey = try #require(created.field("app_key"))
            let secret = try #require(created.field("master_secret")?.split(separator: " ").first.map(String.init))
            #expect(created.stdout.contains("(shown only once)"))
            let stored = try #require(try await test.store.api.app(appKey: appKey))
            #expect(stored.name == "Shop")
            #expect(try await test.store.api.authenticateApp(appKey: appKey, masterSecret: secret) != nil)

            _ = try await test.createApp("Blog")
            let list = try await test.admin("apps", "list")
            #expect(list.status == 0, "\(list)")
            let lines = list.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("APP_KEY" + String(repeating: " ", count: 19) + "NAME  CREATED_AT") == true)
            #expect(lines.count == 3)
            let shopLine = try #require(lines.first { $0.hasPrefix(appKey) })
            #expect(shopLine.contains("  Shop  "))
            #expect(shopLine.hasSuffix("  -"))

            let json = try await test.admin("apps", "list", "--json")
            let apps = try #require(try json.json["apps"] as? [[String: Any]])
            #expect(Set(apps.compactMap { $0["name"] as? String }) == ["Shop", "Blog"])

            let shown = try await test.admin("apps", "show", appKey)
            #expect(shown.field("name") == "Shop")
            #expect(shown.field("apns") == "-")

            // Without --yes and without a terminal to ask on, nothing is deleted.
            let unconfirmed = try await test.admin("apps", "delete", appKey)
            #expect(unconfirmed.status == 64, "\(unconfirmed)")
            #expect(unconfirmed.stderr.contains("add --yes to confirm"))
            #expect(try await test.store.api.app(appKey: appKey) != nil)

            let deleted = try await test.admin("apps", "delete", appKey, "--yes")
            #expect(deleted.status == 0, "\(deleted)")
            #expect(deleted.stdout == "deleted app \(appKey)\n")
            #expect(try await test.store.api.app(appKey: appKey) == nil)

            let again = try await test.admin("apps", "delete", appKey, "--yes")
            #expect(again.status == 1)
            #expect(again.stdout.isEmpty)
            #expect(again.stderr == "error \(HeraldError.Code.appNotFound.rawValue): app_key: no app with this key\n")
        }
    }

    @Test func updateSetsAndClearsTheRateLimit() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let appKey = app.app.appKey
            #expect(try await test.admin("apps", "show", appKey).field("rate_limit") == "none (the server's default)")
            let set = try await test.admin("apps", "update", appKey, "--rate-limit", "600")
            #expect(set.status == 0, "\(set)")
            #expect(set.field("rate_limit") == "600 push requests a minute")
            #expect(try await test.store.api.app(appKey: appKey)?.rateLimitPerMinute == 600)
            #expect(try await test.admin("apps", "update", appKey, "--rate-limit", "default").field("rate_limit") == "none (the server's default)")
            #expect(try await test.store.api.app(appKey: appKey)?.rateLimitPerMinute == nil)
            #expect(try await test.admin("apps", "update", appKey, "--rate-limit", "-3").status == 64)

            let quiet = try await test.admin("apps", "update", appKey, "--quiet-hours", "22:00-07:30", "--quiet-action", "drop", "--daily-cap", "3")
            #expect(quiet.status == 0, "\(quiet)")
            #expect(quiet.field("quiet_hours") == "22:00:00-07:30:00 local time, drop")
            #expect(quiet.field("daily_cap") == "3 operations pushes a device a day")
            #expect(try await test.store.api.app(appKey: appKey)?.controls.dailyCap == 3)
            let cleared = try await test.admin("apps", "update", appKey, "--quiet-hours", "none", "--daily-cap", "none")
            #expect(cleared.field("quiet_hours") == "none" && cleared.field("daily_cap") == "none", "\(cleared)")
            let refused = try await test.admin("apps", "update", appKey, "--quiet-hours", "25:00-08:00")
            #expect(refused.status == 1 && refused.stderr.contains("quiet_hours.start"), "\(refused)")
            #expect(try await test.admin("apps", "update", appKey, "--quiet-hours", "22:00").status == 64)
            let zoned = try await test.admin("apps", "update", appKey, "--time-zone", "Asia/Shanghai")
            #expect(zoned.field("time_zone") == "Asia/Shanghai", "\(zoned)")
            #expect(try await test.admin("apps", "update", appKey, "--time-zone", "Mars/Olympus").status == 1)
            #expect(try await test.admin("apps", "update", appKey).status == 64)
        }
    }

    @Test func createJSONIsTheAPIsAnswer() async throws {
        try await CtlTest.run { test in
            let created = try await test.admin("apps", "create", "Shop", "--json")
            #expect(created.status == 0, "\(created)")
            let json = try created.json
            #expect(Set(json.keys) == ["app_key", "master_secret", "name", "created_at"])
            #expect(try await test.store.api.app(appKey: try #require(json["app_key"] as? String)) != nil)
        }
    }

    @Test func aBadAppNameShowsTheAPIsCodeAndMessage() async throws {
        try await CtlTest.run { test in
            let result = try await test.admin("apps", "create", String(repeating: "n", count: 101))
            #expect(result.status == 1)
            #expect(result.stderr == "error \(HeraldError.Code.limitExceeded.rawValue): name: at most 100 bytes\n")
            #expect(try await test.store.api.listApps().isEmpty)
        }
    }

    @Test func apnsSetRejectsABadKeyWithItsCodeAndStoresAGoodOne() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let bad = test.home.appendingPathComponent("AuthKey_BAD.p8")
            try Data("-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n".utf8).write(to: bad)
            let common = ["--key-id", "ABC123DEFG", "--team-id", "DEF123GHIJ", "--bundle-id", "com.example.app", "--environment", "sandbox"]

            let rejected = try await test.heraldctl(
                ["apps", "apns", "set", app.app.appKey, "--p8", bad.path] + common,
                environment: ["HERALD_ADMIN_TOKEN": CtlTest.adminToken]
            )
            #expect(rejected.status == 1, "\(rejected)")
            #expect(rejected.stderr.hasPrefix("error \(HeraldError.Code.invalidAPNsCredentials.rawValue): private_key"))
            #expect(try await test.store.api.app(appKey: app.app.appKey)?.apns == nil)

            let pem = TestCredentials.p8()
            let good = test.home.appendingPathComponent("AuthKey_ABC123DEFG.p8")
            try Data(pem.utf8).write(to: good)
            // The app key comes from the connection when it isn't given.
            let accepted = try await test.heraldctl(
                ["apps", "apns", "set", "--p8", good.path] + common,
                environment: ["HERALD_ADMIN_TOKEN": CtlTest.adminToken, "HERALD_APP_KEY": app.app.appKey]
            )
            #expect(accepted.status == 0, "\(accepted)")
            #expect(accepted.field("type") == "token")
            #expect(accepted.field("key_id") == "ABC123DEFG")
            #expect(accepted.field("environment") == "sandbox")
            #expect(accepted.field("status") == "ok")
            #expect(accepted.field("sent_to") == "apple")
            let body = pem.split(separator: "\n")[1]
            #expect(!accepted.stdout.contains(body) && !accepted.stderr.contains(body))
            let stored = try #require(try await test.store.api.app(appKey: app.app.appKey)?.apns)
            #expect(stored.keyID == "ABC123DEFG")
            #expect(stored.bundleID == "com.example.app")

            let shown = try await test.admin("apps", "show", app.app.appKey)
            #expect(shown.field("apns.team_id") == "DEF123GHIJ")
            let list = try await test.admin("apps", "list")
            #expect(list.stdout.contains("sandbox token ABC123DEFG team DEF123GHIJ"))

            let removed = try await test.admin("apps", "apns", "delete", app.app.appKey)
            #expect(removed.status == 0, "\(removed)")
            let none = try await test.admin("apps", "apns", "show", app.app.appKey)
            #expect(none.status == 1)
            #expect(none.stderr == "error \(HeraldError.Code.apnsCredentialsNotFound.rawValue): the app has no APNs credentials\n")
        }
    }

    @Test func apnsSetTakesACertificate() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let (certificate, key) = try TestCredentials.certificate()
            let certificateFile = test.home.appendingPathComponent("cert.pem")
            let keyFile = test.home.appendingPathComponent("key.pem")
            try Data(certificate.utf8).write(to: certificateFile)
            try Data(key.utf8).write(to: keyFile)
            let result = try await test.admin(
                "apps",
                "apns",
                "set",
                app.app.appKey,
                "--certificate",
                certificateFile.path,
                "--private-key",
                keyFile.path,
                "--bundle-id",
                "com.example.app",
                "--environment",
                "production"
            )
            #expect(result.status == 0, "\(result)")
            #expect(result.field("type") == "certificate")
            #expect(result.field("certificate_subject")?.contains("Apple Push Services") == true)
        }
    }

    @Test func apnsSetChecksItsFlagsLocally() async throws {
        try await CtlTest.run { test in
            let noKeyID = try await test.admin("apps", "apns", "set", "k", "--p8", "/dev/null", "--bundle-id", "b", "--environment", "sandbox")
            #expect(noKeyID.status == 64)
            #expect(noKeyID.stderr.contains("--p8 needs --key-id and --team-id"))
            let missingFile = try await test.admin(
                "apps",
                "apns",
                "set",
                "k",
                "--p8",
                "/nonexistent.p8",
                "--key-id",
                "ABC123DEFG",
                "--team-id",
                "DEF123GHIJ",
                "--bundle-id",
                "b",
                "--environment",
                "sandbox"
            )
            #expect(missingFile.status == 64)
            #expect(missingFile.stderr == "error: --p8: cannot read /nonexistent.p8\n")
            let badEnvironment = try await test.admin("apps", "apns", "set", "k", "--p8", "/dev/null", "--bundle-id", "b", "--environment", "prod")
            #expect(badEnvironment.status == 64)
        }
    }
}

/// `heraldctl apps sms`: the app's own SMS provider, set, shown without its secret, deleted.
@Suite struct AppsSMSCommandTests {
    @Test func anSMSProviderIsSetShownWithoutItsSecretAndDeleted() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let secretFile = test.home.appendingPathComponent("sms.secret")
            try Data("s3cret-s3cret-s3cret\n".utf8).write(to: secretFile)
            let environment = ["HERALD_ADMIN_TOKEN": CtlTest.adminToken]
            let set = try await test.heraldctl(
                [
                    "apps", "sms", "set", app.app.appKey, "--provider-url", "https://sms.example.com/send", "--template",
                    #"{"to": {{mobile}}, "text": {{content}}}"#, "--secret-file", secretFile.path,
                ],
                environment: environment
            )
            #expect(set.status == 0, "\(set)")
            #expect(set.field("url") == "https://sms.example.com/send")
            #expect(set.field("signature_header") == "X-Herald-Signature")
            #expect(!set.stdout.contains("s3cret"))
            let shown = try await test.heraldctl(["apps", "sms", "show", app.app.appKey], environment: environment)
            #expect(shown.status == 0, "\(shown)")
            #expect(shown.field("timeout_seconds") == "10")
            #expect(!shown.stdout.contains("s3cret"))
            #expect(try await test.store.api.smsProviders.find(appKey: app.app.appKey)?.provider.secret == "s3cret-s3cret-s3cret")

            let bad = try await test.heraldctl(
                ["apps", "sms", "set", app.app.appKey, "--provider-url", "ftp://x", "--template", "{}", "--secret-file", secretFile.path],
                environment: environment
            )
            #expect(bad.status == 1)
            #expect(bad.stderr.hasPrefix("error \(HeraldError.Code.invalidField.rawValue): url"), "\(bad)")

            let deleted = try await test.heraldctl(["apps", "sms", "delete", app.app.appKey], environment: environment)
            #expect(deleted.status == 0, "\(deleted)")
            let gone = try await test.heraldctl(["apps", "sms", "show", app.app.appKey], environment: environment)
            #expect(gone.status == 1)
            #expect(gone.stderr.hasPrefix("error \(HeraldError.Code.smsProviderNotFound.rawValue): "), "\(gone)")
        }
    }
}
