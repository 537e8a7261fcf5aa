import Foundation

/// heraldctl's config file: named profiles of connection settings.
///
/// ```json
/// {
///   "default_profile": "local",
///   "profiles": {
///     "local": {"url": "http://127.0.0.1:8080", "admin_token": "...", "app_key": "...", "master_secret": "..."}
///   }
/// }
/// ```
///
/// Unknown keys are rejected so that a misspelt setting is noticed rather than ignored.
struct ConfigFile: Codable, Equatable {
    /// The profile used when neither `--profile` nor `HERALD_PROFILE` names one.
    var defaultProfile: String?
    var profiles: [String: Profile]

    init(defaultProfile: String? = nil, profiles: [String: Profile] = [:]) {
        self.defaultProfile = defaultProfile
        self.profiles = profiles
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case defaultProfile = "default_profile"
        case profiles
    }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        defaultProfile = try container.decodeIfPresent(String.self, forKey: .defaultProfile)
        profiles = try container.decodeIfPresent([String: Profile].self, forKey: .profiles) ?? [:]
    }

    /// The default location: `$XDG_CONFIG_HOME/herald/heraldctl.json`, else
    /// `~/.config/herald/heraldctl.json`.
    static func defaultPath(environment: [String: String]) -> String {
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            return xdg + "/herald/heraldctl.json"
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.config/herald/heraldctl.json"
    }

    /// Reads the file at `path`; `nil` when it doesn't exist.
    static func load(path: String) throws(CLIError) -> ConfigFile? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .configuration("cannot read the config file \(path)")
        }
        do {
            return try JSONDecoder().decode(ConfigFile.self, from: data)
        } catch let error as UnknownKeyError {
            throw .configuration("config file \(path): unknown key '\(error.key)'")
        } catch {
            throw .configuration("config file \(path) is not valid: \(Self.describe(error))")
        }
    }

    /// Whether users other than the owner may read the file at `path`.
    static func isReadableByOthers(path: String) -> Bool {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let permissions = attributes[.posixPermissions] as? NSNumber
        else { return false }
        return permissions.intValue & 0o044 != 0
    }

    /// Writes the file, readable by its owner only, creating its directory if needed.
    func save(path: String) throws(CLIError) {
        let url = URL(fileURLWithPath: path)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(),
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
            var data = try encoder.encode(self)
            data.append(UInt8(ascii: "\n"))
            // Create it private before any secret is written into it.
            if !FileManager.default.fileExists(atPath: path),
                !FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
            {
                throw CocoaError(.fileWriteUnknown)
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            try data.write(to: url)
        } catch {
            throw .configuration("cannot write the config file \(path)")
        }
    }

    /// Where a decoding error is, without quoting any value from the file.
    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "not JSON" }
        let path: [any CodingKey]
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context):
            path = context.codingPath
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "not JSON" }
            path = context.codingPath
        @unknown default:
            return "not JSON"
        }
        let location = path.map(\.stringValue).joined(separator: ".")
        return location.isEmpty ? "wrong shape" : "wrong type or missing value at \(location)"
    }
}

/// One named set of connection settings. Every field is optional; flags and the
/// environment override them.
struct Profile: Codable, Equatable {
    var url: String?
    var appKey: String?
    var masterSecret: String?
    var adminToken: String?

    init(url: String? = nil, appKey: String? = nil, masterSecret: String? = nil, adminToken: String? = nil) {
        self.url = url
        self.appKey = appKey
        self.masterSecret = masterSecret
        self.adminToken = adminToken
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case url
        case appKey = "app_key"
        case masterSecret = "master_secret"
        case adminToken = "admin_token"
    }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        url = try container.decodeIfPresent(String.self, forKey: .url)
        appKey = try container.decodeIfPresent(String.self, forKey: .appKey)
        masterSecret = try container.decodeIfPresent(String.self, forKey: .masterSecret)
        adminToken = try container.decodeIfPresent(String.self, forKey: .adminToken)
    }

    var hasSecrets: Bool { masterSecret != nil || adminToken != nil }
}

/// A key the config file doesn't know.
struct UnknownKeyError: Error {
    var key: String
}

private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension Decoder {
    fileprivate func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(_ keys: Keys.Type) throws {
        let known = Set(Keys.allCases.map(\.stringValue))
        let container = try container(keyedBy: AnyKey.self)
        let path = codingPath.map(\.stringValue)
        if let unknown = container.allKeys.first(where: { !known.contains($0.stringValue) }) {
            throw UnknownKeyError(key: (path + [unknown.stringValue]).joined(separator: "."))
        }
    }
}
