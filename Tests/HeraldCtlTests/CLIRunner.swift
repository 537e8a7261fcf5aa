import Foundation
import HeraldTestSupport
import Testing

/// What a heraldctl run printed, and how it ended.
typealias CLIResult = ProcessResult

struct CLIFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs the built `heraldctl` binary.
enum CLIRunner {
    /// The binary: `HERALDCTL_BINARY`, else next to the test bundle in the build products
    /// directory, else under `.build-ctl` or `.build` of the package.
    static let binary: URL? = {
        let fileManager = FileManager.default
        if let path = ProcessInfo.processInfo.environment["HERALDCTL_BINARY"] { return URL(fileURLWithPath: path) }
        var candidates: [URL] = []
        for start in [Bundle.main.executableURL, Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])].compactMap({ $0 }) {
            var directory = start.deletingLastPathComponent()
            for _ in 0..<4 {
                candidates.append(directory.appendingPathComponent("heraldctl"))
                directory = directory.deletingLastPathComponent()
            }
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for build in [".build-ctl", ".build"] {
            candidates.append(root.appendingPathComponent("\(build)/debug/heraldctl"))
        }
        return candidates.first { fileManager.isExecutableFile(atPath: $0.path) && !isDirectory($0) }
    }()

    private static func isDirectory(_ url: URL) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &directory) && directory.boolValue
    }

    /// Runs heraldctl on its own thread (never blocking the concurrency pool the server
    /// in the same process needs), killing it after `timeout` seconds.
    static func run(_ arguments: [String], environment: [String: String], timeout: Double = 60) async throws -> CLIResult {
        guard let binary else { throw CLIFailure("heraldctl binary not found; build it first or set HERALDCTL_BINARY") }
        return try await run(executable: binary, arguments, environment: environment, timeout: timeout)
    }

    /// Runs heraldctl with a terminal as its stdout, through util-linux `script`; nil when
    /// `script` is not installed.
    static func runOnTerminal(_ arguments: [String], environment: [String: String], timeout: Double = 60) async throws -> CLIResult? {
        guard let binary else { throw CLIFailure("heraldctl binary not found; build it first or set HERALDCTL_BINARY") }
        let script = URL(fileURLWithPath: "/usr/bin/script")
        guard FileManager.default.isExecutableFile(atPath: script.path) else { return nil }
        let command = ([binary.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        return try await run(executable: script, ["-q", "-e", "-c", command, "/dev/null"], environment: environment, timeout: timeout)
    }

    private static func run(executable: URL, _ arguments: [String], environment: [String: String], timeout: Double) async throws -> CLIResult {
        try await ChildProcess.run(executable, arguments, environment: environment, timeout: timeout)
    }
}
