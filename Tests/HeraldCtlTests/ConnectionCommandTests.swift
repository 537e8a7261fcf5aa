import Foundation
import HeraldCore
import HeraldStore
import Testing

/// Connection settings, profiles, failures and secrets, with the binary against a live server.
@Suite struct ConnectionCommandTests {
    @Test func anUnreachableServerIsExitStatus69WithAClearMessage() async throws {
        try await CtlTest.run { test in
            let result = try await test.heraldctl(
                ["tags", "list"],
                environment: ["HERALD_URL": "http://127.0.0.1:1", "HERALD_APP_KEY": "k", "HERALD_MASTER_SECRET": "s"]
            )
            #expect(result.status == 69)
            #expect(result.stdout.isEmpty)
            #expect(result.stderr == "error: cannot reach Herald at http://127.0.0.1:1: connection refused\n")
        }
    }

    @Test func wrongCredentialsAreTheAPIsUnauthorizedError() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let result = try await test.heraldctl(
                ["tags", "list"],
                environment: ["HERALD_APP_KEY": app.app.appKey, "HERALD_MASTER_SECRET": "wrong-secret-0123456789"]
            )
            #expect(result.status == 1)
            #expect(result.stderr.hasPrefix("error \(HeraldError.Code.unauthorized.rawValue): "))
            let admin = try await test.heraldctl(["apps", "list"], environment: ["HERALD_ADMIN_TOKEN": "not-the-admin-token"])
            #expect(admin.status == 1)
            #expect(admin.stderr.hasPrefix("error \(HeraldError.Code.unauthorized.rawValue): "))
        }
    }

    @Test func aMissingCredentialIsAConfigurationErrorBeforeAnyRequest() async throws {
        try await CtlTest.run { test in
            let apps = try await test.heraldctl(["apps", "list"], environment: ["HERALD_URL": "http://127.0.0.1:1"])
            #expect(apps.status == 78)
            #expect(apps.stderr.hasPrefix("error: no admin token"))
            let tags = try await test.heraldctl(["tags", "list"], environment: ["HERALD_APP_KEY": "k"])
            #expect(tags.status == 78)
            #expect(tags.stderr.hasPrefix("error: no master secret"))
        }
    }

    @Test func badUsageIsExitStatus64AndSendsNothing() async throws {
        try await CtlTest.run { test in
            // An unreachable URL: a request would end with 69, not 64.
            let environment = ["HERALD_URL": "http://127.0.0.1:1", "HERALD_APP_KEY": "k", "HERALD_MASTER_SECRET": "s"]
            for arguments in [
                ["push", "--all", "--alias", "alice", "--alert", "hi"],
                ["push", "--alias", "alice", "--alert", "hi", "--extra", "no-equals-sign"],
                ["push", "--alias", "alice"],
                ["recall"],
                ["status", "m1", "m2", "--watch"],
                ["devices", "frobnicate"],
            ] {
                let result = try await test.heraldctl(arguments, environment: environment)
                #expect(result.status == 64, "\(arguments): \(result)")
                #expect(result.stderr.contains("Usage: heraldctl"), "\(arguments): \(result)")
            }
        }
    }

    @Test func secretsAreNeverPrinted() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let secrets = [CtlTest.adminToken, app.masterSecret, "hunter2-url-password"]
            let environment = [
                "HERALD_ADMIN_TOKEN": CtlTest.adminToken, "HERALD_APP_KEY": app.app.appKey, "HERALD_MASTER_SECRET": app.masterSecret,
            ]
            var results: [CLIResult] = []
            for arguments in [
                ["config", "show"], ["config", "show", "--json"], ["config", "profiles"], ["apps", "list"], ["apps", "list", "--json"],
                ["tags", "list"], ["devices", "show", "0123456789abcdef0123"], ["apps", "show", "nope"],
                ["--help"], ["push", "--help"],
            ] {
                results.append(try await test.heraldctl(arguments, environment: environment))
            }
            // As flags, and in failures.
            results.append(
                try await test.heraldctl(
                    ["tags", "list", "--master-secret", app.masterSecret, "--app-key", "wrong"],
                    environment: [:]
                )
            )
            results.append(
                try await test.heraldctl(
                    ["apps", "list", "--admin-token", CtlTest.adminToken, "--url", "http://ops:hunter2-url-password@127.0.0.1:1"],
                    environment: [:]
                )
            )
            #expect(results.last?.status == 69)
            #expect(results.last?.stderr.contains("http://127.0.0.1:1") == true)
            for result in results {
                for secret in secrets {
                    #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret), "\(result)")
                }
            }
            let shown = results[0]
            #expect(shown.field("master_secret") == "set (env HERALD_MASTER_SECRET)")
            #expect(shown.field("admin_token") == "set (env HERALD_ADMIN_TOKEN)")
        }
    }

    @Test func profilesOfTheConfigFileAreUsedAndOverridden() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let rid = try await test.registerDevice(app)
            _ = try await test.store.api.devices.changeTagMembers(appID: app.app.id, tag: "vip", add: [rid], remove: [])
            _ = try test.writeConfig(
                """
                {"default_profile": "admin",
                 "profiles": {
                   "admin": {"url": "\(test.url)", "admin_token": "\(CtlTest.adminToken)"},
                   "shop": {"url": "\(test.url)", "app_key": "\(app.app.appKey)", "master_secret": "\(app.masterSecret)"},
                   "down": {"url": "http://127.0.0.1:1", "app_key": "\(app.app.appKey)", "master_secret": "\(app.masterSecret)"}}}
                """
            )
            // No HERALD_URL: everything from the file.
            let noURL = ["HERALD_URL": ""]
            let apps = try await test.heraldctl(["apps", "list"], environment: noURL)
            #expect(apps.status == 0, "\(apps)")
            #expect(apps.stdout.contains(app.app.appKey))

            let byFlag = try await test.heraldctl(["tags", "list", "--profile", "shop"], environment: noURL)
            #expect(byFlag.stdout == "TAG\nvip\n", "\(byFlag)")
            let byEnvironment = try await test.heraldctl(["tags", "list"], environment: ["HERALD_URL": "", "HERALD_PROFILE": "shop"])
            #expect(byEnvironment.stdout == "TAG\nvip\n", "\(byEnvironment)")

            // The profile's URL is down; the environment's wins, then the flag's.
            let down = try await test.heraldctl(["tags", "list", "--profile", "down"], environment: noURL)
            #expect(down.status == 69)
            let envWins = try await test.heraldctl(["tags", "list", "--profile", "down"], environment: ["HERALD_URL": test.url])
            #expect(envWins.status == 0, "\(envWins)")
            // Said, not silent; and not said when the profile wins.
            #expect(envWins.stderr == "warning: HERALD_URL from the environment overrides profile 'down' (unset it to use the profile)\n")
            #expect(!down.stderr.contains("warning"))
            let flagWins = try await test.heraldctl(
                ["tags", "list", "--profile", "down", "--url", test.url],
                environment: ["HERALD_URL": "http://127.0.0.1:1"]
            )
            #expect(flagWins.status == 0, "\(flagWins)")

            let shown = try await test.heraldctl(["config", "show", "--profile", "shop"], environment: noURL)
            #expect(shown.field("profile") == "shop")
            #expect(shown.field("url") == "\(test.url) (profile shop)")
            #expect(shown.field("master_secret") == "set (profile shop)")

            let profiles = try await test.heraldctl(["config", "profiles"], environment: noURL)
            #expect(profiles.stdout.split(separator: "\n").count == 4)
            #expect(profiles.stdout.contains("*  admin"))

            let missing = try await test.heraldctl(["tags", "list", "--profile", "nope"], environment: noURL)
            #expect(missing.status == 78)
            #expect(missing.stderr.hasPrefix("error: no profile 'nope' in "))
        }
    }

    @Test func aConfigFileOthersCanReadIsWarnedAbout() async throws {
        try await CtlTest.run { test in
            _ = try test.writeConfig(#"{"profiles": {"default": {"admin_token": "\#(CtlTest.adminToken)"}}}"#, permissions: 0o644)
            let result = try await test.heraldctl(["apps", "list"])
            #expect(result.status == 0, "\(result)")
            #expect(result.stderr.contains("is readable by other users"))
        }
    }

    @Test func aBrokenConfigFileIsExitStatus78() async throws {
        try await CtlTest.run { test in
            _ = try test.writeConfig(#"{"profiles": {"default": {"token": "x"}}}"#)
            let result = try await test.heraldctl(["apps", "list"])
            #expect(result.status == 78)
            #expect(result.stderr.contains("unknown key 'profiles.default.token'"))
            _ = try test.writeConfig("not json")
            #expect(try await test.heraldctl(["apps", "list"]).status == 78)
        }
    }

    @Test func createSavesTheNewAppAsAPrivateProfileInsteadOfPrintingTheSecret() async throws {
        try await CtlTest.run { test in
            let created = try await test.admin("apps", "create", "Shop", "--save-profile", "shop")
            #expect(created.status == 0, "\(created)")
            let appKey = try #require(created.field("app_key"))
            #expect(created.field("master_secret")?.hasPrefix("saved to profile 'shop' in ") == true)

            let path = test.home.appendingPathComponent(".config/herald/heraldctl.json").path
            let permissions = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber
            #expect(permissions?.intValue == 0o600)
            let file = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
            #expect(file["default_profile"] as? String == "shop")
            let profile = try #require((file["profiles"] as? [String: [String: String]])?["shop"])
            let secret = try #require(profile["master_secret"])
            #expect(!created.stdout.contains(secret))
            #expect(try await test.store.api.authenticateApp(appKey: appKey, masterSecret: secret) != nil)

            // The saved default profile is enough for the next command.
            let tags = try await test.heraldctl(["tags", "list"], environment: ["HERALD_URL": ""])
            #expect(tags.status == 0, "\(tags)")
            #expect(tags.stdout == "TAG\n")

            let again = try await test.admin("apps", "create", "Other", "--save-profile", "shop")
            #expect(again.status == 64)
            #expect(try await test.store.api.listApps().count == 1)

            let json = try await test.admin("apps", "create", "Blog", "--save-profile", "blog", "--json")
            #expect(json.status == 0, "\(json)")
            #expect(try json.json["master_secret"] == nil)
            #expect(try json.json["app_key"] is String)
        }
    }

    @Test func completionScriptsComeFromArgumentParser() async throws {
        try await CtlTest.run { test in
            for shell in ["bash", "zsh", "fish"] {
                let result = try await test.heraldctl(["--generate-completion-script", shell])
                #expect(result.status == 0)
                #expect(result.stdout.contains("heraldctl"))
                #expect(result.stdout.contains("push"))
            }
            #expect(try await test.heraldctl(["--help"]).stdout.contains("--generate-completion-script"))
        }
    }
}
