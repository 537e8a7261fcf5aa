import Foundation
import HeraldTestSupport
import NIOCore
import NIOPosix
import Testing

/// `herald serve`, the built binary, when one of its ports is taken: it stops what it
/// started, prints one line naming the port and its setting, and exits non-zero.
@Suite(.serialized)
struct ServeStartupTests {
    @Test(arguments: [
        ("HERALD_HTTP_PORT", "http.port"),
        ("HERALD_MQTT_PORT", "mqtt.port"),
        ("HERALD_APNS_SANDBOX_PORT", "apns.sandboxPort"),
        ("HERALD_APNS_SANDBOX_INSPECT_PORT", "apns.sandboxInspectPort"),
    ])
    func aTakenPortStopsHeraldWithOneLineNamingItsSetting(variable: String, key: String) async throws {
        let binary = try #require(HeraldBinary.url, "herald binary not found; build it first or set HERALD_BINARY")
        let taken = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let port = try #require(taken.localAddress?.port)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-serve-\(UUID().uuidString)").path
        defer {
            HeraldBinary.stopPostgres(dataDirectory: directory)
            try? FileManager.default.removeItem(atPath: directory)
        }
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") }
        environment.merge([
            "HERALD_DATA_DIR": directory,
            "HERALD_HTTP_HOST": "127.0.0.1",
            "HERALD_MQTT_HOST": "127.0.0.1",
            "HERALD_HTTP_PORT": "0",
            "HERALD_MQTT_PORT": "0",
            "HERALD_APNS_SANDBOX": "on",
            "HERALD_APNS_SANDBOX_PORT": "0",
            "HERALD_APNS_SANDBOX_INSPECT_PORT": "0",
            "HERALD_LOG_LEVEL": "warning",
        ]) { $1 }
        environment[variable] = String(port)

        let result = try await HeraldBinary.run(binary, ["serve"], environment: environment, timeout: 120)
        try? await taken.close()

        #expect(result.status != 0, "\(result)")
        let errorLines = result.stderr.split(separator: "\n").filter { $0.hasPrefix("herald: error:") }
        #expect(errorLines.count == 1, "\(result)")
        let line = errorLines.first.map(String.init) ?? ""
        #expect(line.contains(key), "\(result)")
        #expect(line.contains(String(port)), "\(result)")
        #expect(line.contains(variable), "\(result)")
        #expect(!result.stderr.contains("Fatal error"), "\(result)")
        #expect(HeraldBinary.postgresProcesses(dataDirectory: directory).isEmpty, "a PostgreSQL of \(directory) is still running")
    }
}
