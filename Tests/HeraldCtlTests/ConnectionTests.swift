import Foundation
import Testing

@testable import heraldctl

/// Where each connection setting comes from: flag, then environment, then profile.
@Suite struct ConnectionTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("heraldctl-unit-\(UUID().uuidString)")

    func withConfig(_ json: String, _ body: (String) throws -> Void) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("heraldctl.json").path
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        try body(path)
    }

    let config = """
        {"default_profile": "a",
         "profiles": {"a": {"url": "http://a:1", "app_key": "key-a", "master_secret": "secret-a"},
                      "b": {"url": "http://b:2", "app_key": "key-b", "admin_token": "token-b"}}}
        """

    @Test func flagsBeatTheEnvironmentWhichBeatsTheProfile() throws {
        try withConfig(config) { path in
            let options = try ConnectionOptions.parse(["--config", path, "--app-key", "key-flag"])
            let connection = try options.resolve(environment: ["HERALD_URL": "http://env:3", "HOME": "/nonexistent"])
            #expect(connection.url.absoluteString == "http://env:3")
            #expect(connection.urlSource == .environment("HERALD_URL"))
            #expect(connection.appKey?.value == "key-flag")
            #expect(connection.appKey?.source == .flag)
            #expect(connection.masterSecret?.value == "secret-a")
            #expect(connection.masterSecret?.source == .profile("a"))
            #expect(connection.adminToken == nil)
        }
    }

    @Test func theProfileFlagBeatsHeraldProfileWhichBeatsTheDefault() throws {
        try withConfig(config) { path in
            let fromEnvironment = try ConnectionOptions.parse(["--config", path]).resolve(environment: ["HERALD_PROFILE": "b"])
            #expect(fromEnvironment.profile == "b")
            #expect(fromEnvironment.adminToken?.value == "token-b")
            let fromFlag = try ConnectionOptions.parse(["--config", path, "--profile", "a"]).resolve(environment: ["HERALD_PROFILE": "b"])
            #expect(fromFlag.profile == "a")
            #expect(fromFlag.url.absoluteString == "http://a:1")
        }
    }

    @Test func withoutAConfigFileTheDefaultURLIsLocal() throws {
        let connection = try ConnectionOptions.parse([]).resolve(environment: ["HOME": "/nonexistent-home"])
        #expect(connection.url.absoluteString == "http://127.0.0.1:8080")
        #expect(connection.urlSource == .default)
        #expect(!connection.configExists)
    }

    @Test func anUnknownProfileOrKeyOrAMissingExplicitFileIsAConfigurationError() throws {
        try withConfig(config) { path in
            #expect(throws: CLIError.self) { try ConnectionOptions.parse(["--config", path, "--profile", "c"]).resolve(environment: [:]) }
        }
        try withConfig(#"{"profiles": {"a": {"master-secret": "x"}}}"#) { path in
            let options = try ConnectionOptions.parse(["--config", path])
            do {
                _ = try options.resolve(environment: [:])
                Issue.record("an unknown key was accepted")
            } catch let error as CLIError {
                #expect(error.description.contains("unknown key 'profiles.a.master-secret'"))
                #expect(error.exitStatus == 78)
                #expect(!error.description.contains("\"x\""))
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
        #expect(throws: CLIError.self) { try ConnectionOptions.parse(["--config", "/nonexistent/heraldctl.json"]).resolve(environment: [:]) }
    }

    @Test func theDisplayedURLHasNoPassword() throws {
        let connection = try ConnectionOptions.parse(["--url", "https://ops:hunter2@herald.example:8443/api"]).resolve(environment: [:])
        #expect(connection.displayURL == "https://herald.example:8443/api")
    }

    @Test func pathSegmentsArePercentEncoded() {
        #expect(APIClient.segment("new users/β?#") == "new%20users%2F%CE%B2%3F%23")
        #expect(APIClient.segment("vip-1_a.b~") == "vip-1_a.b~")
    }
}
