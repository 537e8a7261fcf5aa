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

/// The built `herald` executable, run as a child process.
enum HeraldBinary {
    /// `HERALD_BINARY`, else `herald` next to the test bundle, else under `.build/debug`.
    static let url: URL? = {
        if let path = ProcessInfo.processInfo.environment["HERALD_BINARY"] { return URL(fileURLWithPath: path) }
        var candidates: [URL] = []
        for start in [Bundle.main.executableURL, Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])].compactMap({ $0 }) {
            var directory = start.deletingLastPathComponent()
            for _ in 0..<4 {
                candidates.append(directory.appendingPathComponent("herald"))
                directory = directory.deletingLastPathComponent()
            }
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/herald"))
        return candidates.first { candidate in
            var directory: ObjCBool = false
            return FileManager.default.fileExists(atPath: candidate.path, isDirectory: &directory) && !directory.boolValue
                && FileManager.default.isExecutableFile(atPath: candidate.path)
        }
    }()

    typealias Result = ProcessResult

    /// Runs the binary on a thread of its own, terminating it after `timeout` seconds.
    static func run(_ binary: URL, _ arguments: [String], environment: [String: String], timeout: Double) async throws -> Result {
        try await ChildProcess.run(binary, arguments, environment: environment, timeout: timeout)
    }

    /// Process ids of PostgreSQL servers whose command line names `dataDirectory`.
    static func postgresProcesses(dataDirectory: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry in
            guard let pid = Int32(entry), let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            let command = String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
            return command.contains("postgres") && command.contains(dataDirectory) ? pid : nil
        }
    }

    /// Stops a PostgreSQL a failed run left behind, so a failing test doesn't leak it.
    static func stopPostgres(dataDirectory: String) {
        for pid in postgresProcesses(dataDirectory: dataDirectory) { kill(pid, SIGQUIT) }
    }
}
