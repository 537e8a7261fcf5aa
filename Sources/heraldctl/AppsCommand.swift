import ArgumentParser
import Foundation

/// `heraldctl apps`: apps and their APNs credentials, with the admin token.
struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "Create, list, change and delete apps; set their APNs credentials (admin token).",
        subcommands: [List.self, Create.self, Show.self, Update.self, Delete.self, APNsCommand.self, FCMCommand.self, SMSCommand.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List every app.")

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let response = try await client.get("/admin/v1/apps", .admin)
            try output.emit(response) { () throws(CLIError) in
                let list = try response.decode(AppList.self, url: client.connection.displayURL)
                var table = TableRenderer(["APP_KEY", "NAME", "CREATED_AT", "APNS"])
                for app in list.apps {
                    table.append([app.appKey, app.name, app.createdAt, app.apns.map { "\($0.environment) \($0.summary)" } ?? "-"])
                }
                return table.render()
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an app and print its app key and master secret.",
            discussion: """
                The master secret is shown only once. With --save-profile it is written to the \
                config file instead (mode 0600) and not printed.

                An app moving from JPush keeps its credentials: --jpush-app-key with the app's \
                JPush app key, and its master secret in JPUSH_MASTER_SECRET (or \
                --jpush-master-secret); its servers then authenticate as before.
                """
        )

        @Argument(help: "The app's display name (1 to 100 bytes).") var name: String
        @Option(help: ArgumentHelp("Save the app's URL, key and master secret as this profile of the config file.", valueName: "profile"))
        var saveProfile: String?
        @Option(help: ArgumentHelp("Create the app with this app key from JPush (24 lowercase hex characters).", valueName: "key"))
        var jpushAppKey: String?
        @Option(
            help: ArgumentHelp(
                "The JPush master secret that goes with --jpush-app-key (env JPUSH_MASTER_SECRET, which `ps` doesn't show).",
                valueName: "secret"
            )
        )
        var jpushMasterSecret: String?

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        /// The body: the name, and the JPush credentials when given.
        func requestBody(environment: [String: String] = ProcessInfo.processInfo.environment) throws(CLIError) -> [String: String] {
            let secret = jpushMasterSecret ?? environment["JPUSH_MASTER_SECRET"].flatMap { $0.isEmpty ? nil : $0 }
            switch (jpushAppKey, secret) {
            case (nil, nil):
                return ["name": name]
            case (let key?, let secret?):
                return ["name": name, "app_key": key, "master_secret": secret]
            case (nil, _?):
                guard jpushMasterSecret != nil else { return ["name": name] }
                throw .usage("--jpush-master-secret needs --jpush-app-key")
            case (_?, nil):
                throw .usage("--jpush-app-key needs the master secret: set JPUSH_MASTER_SECRET or pass --jpush-master-secret")
            }
        }

        func run() async throws {
            let client = try connection.client()
            let body = try requestBody()
            let path = client.connection.configPath
            var file = try ConfigFile.load(path: path) ?? ConfigFile()
            if let saveProfile, file.profiles[saveProfile]?.masterSecret != nil {
                throw CLIError.usage("profile '\(saveProfile)' in \(path) already holds an app's master secret; choose another name")
            }

            let response = try await client.send("POST", "/admin/v1/apps", json: body, .admin)
            let created = try response.decode(CreatedApp.self, url: client.connection.displayURL)
            guard let saveProfile else {
                try output.emit(response) {
                    TableRenderer.fields(Self.fields(created) + [("master_secret", created.masterSecret + "  (shown only once)")])
                }
                return
            }

            var profile = file.profiles[saveProfile] ?? Profile()
            profile.url = client.connection.url.absoluteString
            profile.appKey = created.appKey
            profile.masterSecret = created.masterSecret
            file.profiles[saveProfile] = profile
            if file.defaultProfile == nil { file.defaultProfile = saveProfile }
            try file.save(path: path)

            if output.json {
                Terminal.printRaw(try Self.withoutSecret(response.body))
            } else {
                let note = "saved to profile '\(saveProfile)' in \(path)" + (file.defaultProfile == saveProfile ? " (the default profile)" : "")
                Terminal.print(TableRenderer.fields(Self.fields(created) + [("master_secret", note)]))
            }
        }

        static func fields(_ created: CreatedApp) -> [(String, String)] {
            [("app_key", created.appKey), ("name", created.name), ("created_at", created.createdAt)]
        }

        /// The API's answer without `master_secret`, once it is saved in the config file.
        static func withoutSecret(_ body: Data) throws(CLIError) -> Data {
            guard var object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
                throw .usage("cannot read the answer")
            }
            object["master_secret"] = nil
            guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
                throw .usage("cannot write the answer")
            }
            return data
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show an app and its APNs credentials.")

        @Argument(help: "The app key.") var appKey: String

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let response = try await client.get("/admin/v1/apps/\(APIClient.segment(appKey))", .admin)
            try output.emit(response) { () throws(CLIError) in
                let app = try response.decode(App.self, url: client.connection.displayURL)
                var pairs = [("app_key", app.appKey), ("name", app.name), ("created_at", app.createdAt)]
                if let apns = app.apns {
                    pairs += apns.fields.map { ("apns.\($0.0)", $0.1) }
                } else {
                    pairs.append(("apns", "-"))
                }
                return TableRenderer.fields(pairs + app.settingsFields)
            }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change an app's settings.",
            discussion: """
                --rate-limit: push requests a minute (send, validate, batch), shared by every node; \
                0 is no limit, `default` follows the server's api.rateLimit.perMinute.
                --quiet-hours START-END (local time of each device, HH:MM or HH:MM:SS; across \
                midnight when END is earlier) with --quiet-action hold (wait for the end, the \
                default) or drop; `none` removes them. --daily-cap N: operations pushes one device \
                gets at most per local day; `none` removes it. Both leave system pushes \
                (classification 1) alone.
                Examples:
                  heraldctl apps update $APP_KEY --rate-limit 600
                  heraldctl apps update $APP_KEY --quiet-hours 22:00-08:00 --daily-cap 3
                  heraldctl apps update $APP_KEY --time-zone Asia/Shanghai
                """
        )

        @Argument(help: "The app key.") var appKey: String
        @Option(help: ArgumentHelp("Push requests a minute: a number (0: none), or `default`.", valueName: "n|default"))
        var rateLimit: String?
        @Option(help: ArgumentHelp("Quiet hours in each device's local time, or `none`.", valueName: "HH:MM-HH:MM|none"))
        var quietHours: String?
        @Option(help: "What quiet hours do to an operations push: hold (default) or drop.") var quietAction: QuietAction?
        @Option(help: ArgumentHelp("Operations pushes per device per local day, or `none`.", valueName: "n|none")) var dailyCap: String?
        @Option(help: ArgumentHelp("The app's IANA time zone (schedules; devices without one).", valueName: "zone")) var timeZone: String?

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        enum QuietAction: String, ExpressibleByArgument, CaseIterable { case hold, drop }

        func validate() throws {
            guard rateLimit != nil || quietHours != nil || dailyCap != nil || timeZone != nil else {
                throw ValidationError("Nothing to change: give --rate-limit, --quiet-hours, --daily-cap or --time-zone.")
            }
            if let rateLimit, rateLimit != "default", Int(rateLimit).map({ $0 >= 0 }) != true {
                throw ValidationError("--rate-limit must be 0 or more, or `default`; got '\(rateLimit)'.")
            }
            if let quietHours, quietHours != "none", Self.window(quietHours) == nil {
                throw ValidationError("--quiet-hours must be START-END (22:00-08:00) or `none`; got '\(quietHours)'.")
            }
            if quietAction != nil, quietHours == nil || quietHours == "none" { throw ValidationError("--quiet-action goes with --quiet-hours.") }
            if let dailyCap, dailyCap != "none", Int(dailyCap).map({ $0 >= 1 }) != true {
                throw ValidationError("--daily-cap must be 1 or more, or `none`; got '\(dailyCap)'.")
            }
        }

        /// `22:00-08:00` as its two times; the server checks them.
        static func window(_ text: String) -> (start: String, end: String)? {
            let parts = text.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
            return (String(parts[0]), String(parts[1]))
        }

        /// The body: only the settings given, `null` for `default` / `none`.
        struct Settings: Encodable {
            var rateLimit: String?
            var quietHours: String?
            var quietAction: QuietAction?
            var dailyCap: String?

            enum CodingKeys: String, CodingKey {
                case rateLimit = "rate_limit_per_minute"
                case quietHours = "quiet_hours"
                case dailyCap = "daily_cap"
            }

            struct Window: Encodable {
                var start: String
                var end: String
                var action: String
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                if let rateLimit { try container.encode(Int(rateLimit), forKey: .rateLimit) }
                if let quietHours {
                    let window = Update.window(quietHours).map {
                        Window(start: $0.start, end: $0.end, action: (quietAction ?? .hold).rawValue)
                    }
                    try container.encode(window, forKey: .quietHours)
                }
                if let dailyCap { try container.encode(Int(dailyCap), forKey: .dailyCap) }
            }
        }

        func run() async throws {
            let client = try connection.client()
            let path = "/admin/v1/apps/\(APIClient.segment(appKey))"
            if let timeZone {
                _ = try await client.send("PUT", path + "/time_zone", json: ["time_zone": timeZone], .admin)
            }
            let settings = Settings(rateLimit: rateLimit, quietHours: quietHours, quietAction: quietAction, dailyCap: dailyCap)
            let response = try await client.send("PATCH", path, json: settings, .admin)
            try output.emit(response) { () throws(CLIError) in
                let app = try response.decode(App.self, url: client.connection.displayURL)
                return TableRenderer.fields([("app_key", app.appKey)] + app.settingsFields)
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete an app with its devices, aliases, tags and APNs credentials."
        )

        @Argument(help: "The app key.") var appKey: String
        @Flag(help: "Delete without asking (for scripts); otherwise the app key must be typed again on a terminal.")
        var yes = false

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            if !yes {
                guard Terminal.stdinIsTTY else {
                    throw CLIError.usage("deleting app \(appKey) removes all its devices, aliases, tags and messages: add --yes to confirm")
                }
                Terminal.write("This deletes app \(appKey) with all its devices, aliases, tags and messages.\nType the app key to confirm: ")
                guard readLine()?.trimmingCharacters(in: .whitespaces) == appKey else {
                    throw CLIError.usage("not confirmed: nothing was deleted")
                }
            }
            let response = try await client.delete("/admin/v1/apps/\(APIClient.segment(appKey))", .admin)
            try output.emit(response) { "deleted app \(appKey)" }
        }
    }
}
