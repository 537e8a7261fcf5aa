import ArgumentParser
import Configuration
import SystemPackage

/// Command-line options shared by the subcommands. Every option is also an environment
/// variable (`HERALD_...`) and a key of the optional JSON configuration file; the command
/// line wins over the environment, which wins over the file.
struct ConfigOptions: ParsableArguments {
    @Option(name: .customLong("config"), help: "A JSON configuration file (also HERALD_CONFIG_FILE).")
    var configFile: String?

    @Option(help: "PostgreSQL URL; without one, an embedded PostgreSQL is started (HERALD_DATABASE_URL).")
    var databaseURL: String?

    @Option(help: "Directory for Herald's own files (HERALD_DATA_DIR, default .herald).")
    var dataDir: String?

    @Option(help: "HTTP listen address (HERALD_HTTP_HOST, default 0.0.0.0).")
    var httpHost: String?

    @Option(help: "HTTP port (HERALD_HTTP_PORT, default 8080).")
    var httpPort: Int?

    @Option(help: "MQTT gateway port (HERALD_MQTT_PORT, default 1883).")
    var mqttPort: Int?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical (HERALD_LOG_LEVEL).")
    var logLevel: String?

    /// The configuration: these options, then the environment, then the file.
    func reader(environment: [String: String]) async throws -> ConfigReader {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        if let databaseURL { values["database.url"] = .init(.string(databaseURL), isSecret: true) }
        if let dataDir { values["dataDir"] = .init(.string(dataDir), isSecret: false) }
        if let httpHost { values["http.host"] = .init(.string(httpHost), isSecret: false) }
        if let httpPort { values["http.port"] = .init(.int(httpPort), isSecret: false) }
        if let mqttPort { values["mqtt.port"] = .init(.int(mqttPort), isSecret: false) }
        if let logLevel { values["log.level"] = .init(.string(logLevel), isSecret: false) }

        let environmentProvider = KeyMappingProvider(
            upstream: EnvironmentVariablesProvider(
                environmentVariables: environment,
                secretsSpecifier: .specific(HeraldConfiguration.secretVariables)
            ),
            keyMapper: { $0.prepending(["herald"]) }
        )
        var providers: [any ConfigProvider] = [InMemoryProvider(name: "command line", values: values), environmentProvider]
        if let path = configFile ?? environment["HERALD_CONFIG_FILE"] {
            do {
                providers.append(try await FileProvider<JSONSnapshot>(filePath: FilePath(path)))
            } catch {
                throw StartupError("cannot read configuration file \(path): \(error)")
            }
        }
        return ConfigReader(providers: providers)
    }
}

/// A failure before Herald could start, reported as one clear line.
struct StartupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
