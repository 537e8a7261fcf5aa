import ArgumentParser
import Foundation

/// Where the API is and which credentials to use. Each setting comes from its flag, else
/// the environment, else the selected profile of the config file.
struct ConnectionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Herald's API (env HERALD_URL; default \(Connection.defaultURL)).", valueName: "url"))
    var url: String?

    @Option(help: ArgumentHelp("The app key, for device, tag, alias and push commands (env HERALD_APP_KEY).", valueName: "key"))
    var appKey: String?

    @Option(
        help: ArgumentHelp(
            "The app's master secret (env HERALD_MASTER_SECRET). Flags are visible to other users in `ps`: prefer the environment or a profile.",
            valueName: "secret"
        )
    )
    var masterSecret: String?

    @Option(help: ArgumentHelp("The admin token, for `apps` commands (env HERALD_ADMIN_TOKEN).", valueName: "token"))
    var adminToken: String?

    @Option(help: ArgumentHelp("A profile of the config file (env HERALD_PROFILE).", valueName: "name"))
    var profile: String?

    @Option(
        help: ArgumentHelp(
            "The config file (env HERALDCTL_CONFIG; default $XDG_CONFIG_HOME/herald/heraldctl.json or ~/.config/herald/heraldctl.json).",
            valueName: "path"
        )
    )
    var config: String?

    @Option(help: ArgumentHelp("Seconds to wait for each answer of the API.", valueName: "seconds"))
    var requestTimeout: Double = 30

    func validate() throws {
        guard requestTimeout > 0 else { throw ValidationError("--request-timeout must be more than 0 seconds.") }
    }

    /// The settings after applying flags, environment and the config file in that order.
    func resolve(environment: [String: String] = ProcessInfo.processInfo.environment) throws(CLIError) -> Connection {
        let explicitPath = config ?? environment["HERALDCTL_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
        let path = explicitPath ?? ConfigFile.defaultPath(environment: environment)
        let file = try ConfigFile.load(path: path)
        if explicitPath != nil, file == nil {
            throw .configuration("the config file \(path) does not exist")
        }

        let requested = profile ?? environment["HERALD_PROFILE"].flatMap { $0.isEmpty ? nil : $0 }
        var selected: (name: String, profile: Profile)?
        if let requested {
            guard let file, let found = file.profiles[requested] else {
                throw .configuration("no profile '\(requested)' in \(file == nil ? "the config file \(path), which does not exist" : path)")
            }
            selected = (requested, found)
        } else if let file, let name = file.defaultProfile ?? (file.profiles["default"] != nil ? "default" : nil) {
            guard let found = file.profiles[name] else {
                throw .configuration("default_profile '\(name)' is not a profile in \(path)")
            }
            selected = (name, found)
        }

        func setting(_ flag: String?, _ variable: String, _ keyPath: KeyPath<Profile, String?>) -> Connection.Setting? {
            if let flag { return .init(value: flag, source: .flag) }
            if let value = environment[variable], !value.isEmpty {
                // Said, not silent: a profile saved on purpose loses to a variable set long ago.
                if let selected, let saved = selected.profile[keyPath: keyPath], saved != value {
                    Terminal.warn("warning: \(variable) from the environment overrides profile '\(selected.name)' (unset it to use the profile)")
                }
                return .init(value: value, source: .environment(variable))
            }
            if let selected, let value = selected.profile[keyPath: keyPath] { return .init(value: value, source: .profile(selected.name)) }
            return nil
        }

        let urlSetting = setting(url, "HERALD_URL", \.url) ?? .init(value: Connection.defaultURL, source: .default)
        let connection = Connection(
            url: try Connection.parseURL(urlSetting.value),
            urlSource: urlSetting.source,
            appKey: setting(appKey, "HERALD_APP_KEY", \.appKey),
            masterSecret: setting(masterSecret, "HERALD_MASTER_SECRET", \.masterSecret),
            adminToken: setting(adminToken, "HERALD_ADMIN_TOKEN", \.adminToken),
            configPath: path,
            configExists: file != nil,
            profile: selected?.name,
            requestTimeout: requestTimeout
        )
        if let selected, selected.profile.hasSecrets, ConfigFile.isReadableByOthers(path: path) {
            Terminal.warn("warning: \(path) holds secrets and is readable by other users; run chmod 600 on it")
        }
        return connection
    }
}

/// Resolved connection settings, each with where it came from.
struct Connection: Sendable {
    static let defaultURL = "http://127.0.0.1:8080"

    enum Source: Sendable, Equatable, CustomStringConvertible {
        case flag
        case environment(String)
        case profile(String)
        case `default`

        var description: String {
            switch self {
            case .flag: "flag"
            case .environment(let name): "env \(name)"
            case .profile(let name): "profile \(name)"
            case .default: "default"
            }
        }
    }

    struct Setting: Sendable {
        var value: String
        var source: Source
    }

    var url: URL
    var urlSource: Source
    var appKey: Setting?
    var masterSecret: Setting?
    var adminToken: Setting?
    /// The config file: the one read, or where `--save-profile` would create it.
    var configPath: String
    /// Whether `configPath` existed and was read.
    var configExists: Bool
    /// The profile the settings came from, if any.
    var profile: String?
    var requestTimeout: Double

    /// The URL as it may be shown: without user or password.
    var displayURL: String { Self.display(url) }

    static func display(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "the configured URL" }
        components.user = nil
        components.password = nil
        return components.string ?? "the configured URL"
    }

    static func parseURL(_ text: String) throws(CLIError) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
            throw .configuration("the Herald URL must look like http://host:port (got something else)")
        }
        return url
    }
}
