import Foundation
import HeraldAPI
import HeraldCore
import HeraldNodeTesting
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import Prometheus
import Testing

/// A heraldctl test: the real application on a fresh database, served on a free port,
/// and the built `heraldctl` binary run against it as a subprocess.
struct CtlTest: Sendable {
    static let adminToken = TestNode.adminToken

    /// The API's URL.
    let url: String
    let store: TestStores
    /// A private HOME, so the default config file is the test's own.
    let home: URL

    static func run(_ body: @Sendable @escaping (CtlTest) async throws -> Void) async throws {
        try await TestDatabase.withDatabase { databaseURL in
            let configuration = APIConfiguration(host: "127.0.0.1", port: 0, adminToken: adminToken)
            try await TestAPI.withApplication(databaseURL, configuration: configuration) { app, store in
                try await app.test(.live) { http in
                    try await withHome { home in
                        try await body(CtlTest(url: "http://127.0.0.1:\(try #require(http.port))", store: store, home: home))
                    }
                }
            }
        }
    }

    /// Runs `body` with a fresh HOME directory for heraldctl, removed afterwards.
    static func withHome<Result: Sendable>(_ body: (URL) async throws -> Result) async throws -> Result {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("heraldctl-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        return try await body(home)
    }

    /// Runs heraldctl with HOME and HERALD_URL set, plus `environment`; nothing else of the
    /// test process's environment leaks in.
    func heraldctl(_ arguments: [String], environment: [String: String] = [:]) async throws -> CLIResult {
        var base = ["HOME": home.path, "HERALD_URL": url, "PATH": "/usr/bin:/bin"]
        base.merge(environment) { _, new in new }
        return try await CLIRunner.run(arguments, environment: base)
    }

    /// heraldctl with the admin token in the environment.
    func admin(_ arguments: String...) async throws -> CLIResult {
        try await heraldctl(arguments, environment: ["HERALD_ADMIN_TOKEN": Self.adminToken])
    }

    /// heraldctl with an app's key and master secret in the environment.
    func operator_(_ app: CreatedApp, _ arguments: String...) async throws -> CLIResult {
        try await heraldctl(arguments, environment: ["HERALD_APP_KEY": app.app.appKey, "HERALD_MASTER_SECRET": app.masterSecret])
    }

    /// An app made directly in the store.
    func createApp(_ name: String = "Shop") async throws -> CreatedApp {
        try await store.api.createApp(name: name)
    }

    /// An iOS device of `app`, registered directly in the store.
    func registerDevice(_ app: CreatedApp) async throws -> String {
        try await store.api.devices.register(
            appKey: app.app.appKey,
            DeviceRegistration(platform: .ios, apnsToken: RandomToken.hex(byteCount: 32))
        ).registrationID
    }

    func device(_ app: CreatedApp, _ registrationID: String) async throws -> DeviceRecord? {
        try await store.api.devices.find(appID: app.app.id, registrationID: registrationID)
    }

    /// Writes the config file at its default place under HOME.
    func writeConfig(_ json: String, permissions: Int = 0o600) throws -> URL {
        let directory = home.appendingPathComponent(".config/herald")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("heraldctl.json")
        try Data(json.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: permissions], ofItemAtPath: file.path)
        return file
    }
}

extension CLIResult {
    /// The value of a `key  value` line of a fields listing.
    func field(_ key: String) -> String? {
        for line in stdout.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            if parts.count == 2, parts[0] == key { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    /// stdout parsed as a JSON object.
    var json: [String: Any] {
        get throws {
            guard let object = try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any] else {
                throw CLIFailure("stdout is not a JSON object: \(stdout)")
            }
            return object
        }
    }
}
