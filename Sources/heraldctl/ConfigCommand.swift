import ArgumentParser
import Foundation

/// `heraldctl config`: which settings are in effect and where they come from. Secrets are
/// reported as set or not set, never shown.
struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Show the connection settings in effect, and the config file's profiles.",
        discussion: """
            The config file (~/.config/herald/heraldctl.json, or --config / HERALDCTL_CONFIG) holds \
            named profiles; keep it private (chmod 600):
              {"default_profile": "local",
               "profiles": {"local": {"url": "http://127.0.0.1:8080", "admin_token": "...",
                                      "app_key": "...", "master_secret": "..."}}}
            `heraldctl apps create NAME --save-profile PROFILE` writes a new app's credentials into it.
            """,
        subcommands: [Show.self, Profiles.self]
    )

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the settings in effect and their sources (secrets hidden).")

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let resolved = try connection.resolve()
            let secret = { (setting: Connection.Setting?) in setting.map { "set (\($0.source))" } ?? "not set" }
            if output.json {
                var object: [String: Any] = [
                    "config_file": resolved.configPath,
                    "config_file_exists": resolved.configExists,
                    "profile": resolved.profile ?? NSNull(),
                    "url": ["value": resolved.displayURL, "source": "\(resolved.urlSource)"],
                    "request_timeout": resolved.requestTimeout,
                ]
                object["app_key"] = resolved.appKey.map { ["value": $0.value, "source": "\($0.source)"] } ?? NSNull()
                object["master_secret"] = resolved.masterSecret.map { ["set": true, "source": "\($0.source)"] } ?? ["set": false]
                object["admin_token"] = resolved.adminToken.map { ["set": true, "source": "\($0.source)"] } ?? ["set": false]
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
                Terminal.printRaw(data)
                return
            }
            Terminal.print(
                TableRenderer.fields([
                    ("config_file", resolved.configPath + (resolved.configExists ? "" : " (does not exist)")),
                    ("profile", resolved.profile ?? "-"),
                    ("url", "\(resolved.displayURL) (\(resolved.urlSource))"),
                    ("app_key", resolved.appKey.map { "\($0.value) (\($0.source))" } ?? "not set"),
                    ("master_secret", secret(resolved.masterSecret)),
                    ("admin_token", secret(resolved.adminToken)),
                ])
            )
        }
    }

    struct Profiles: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the profiles of the config file.")

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let resolved = try connection.resolve()
            let file = try ConfigFile.load(path: resolved.configPath) ?? ConfigFile()
            let names = file.profiles.keys.sorted()
            if output.json {
                let profiles = names.map { name -> [String: Any] in
                    let profile = file.profiles[name]!
                    return [
                        "name": name,
                        "url": profile.url.flatMap(URL.init(string:)).map(Connection.display) ?? NSNull(),
                        "app_key": profile.appKey ?? NSNull(),
                        "master_secret": ["set": profile.masterSecret != nil],
                        "admin_token": ["set": profile.adminToken != nil],
                        "selected": name == resolved.profile,
                    ]
                }
                let data = try JSONSerialization.data(withJSONObject: ["profiles": profiles], options: [.sortedKeys, .withoutEscapingSlashes])
                Terminal.printRaw(data)
                return
            }
            var table = TableRenderer(["", "PROFILE", "URL", "APP_KEY", "MASTER_SECRET", "ADMIN_TOKEN"])
            for name in names {
                let profile = file.profiles[name]!
                table.append([
                    name == resolved.profile ? "*" : "",
                    name,
                    profile.url.flatMap(URL.init(string:)).map(Connection.display) ?? "-",
                    profile.appKey ?? "-",
                    profile.masterSecret == nil ? "-" : "set",
                    profile.adminToken == nil ? "-" : "set",
                ])
            }
            Terminal.print(names.isEmpty ? "no profiles in \(resolved.configPath)" : table.render())
        }
    }
}
