import Foundation
import Testing

/// What a heraldctl run printed, and how it ended.
struct CLIResult: Sendable, CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
}

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
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                do {
                    continuation.resume(returning: try runBlocking(executable, arguments, environment, timeout))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.start()
        }
    }

    private static func runBlocking(_ binary: URL, _ arguments: [String], _ environment: [String: String], _ timeout: Double) throws -> CLIResult {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("heraldctl-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let stdoutURL = directory.appendingPathComponent("stdout")
        let stderrURL = directory.appendingPathComponent("stderr")
        try Data().write(to: stdoutURL)
        try Data().write(to: stderrURL)
        let stdout = try FileHandle(forWritingTo: stdoutURL)
        let stderr = try FileHandle(forWritingTo: stderrURL)

        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let killer = DispatchWorkItem { [process] in if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
        process.waitUntilExit()
        killer.cancel()
        try stdout.close()
        try stderr.close()
        return CLIResult(
            status: process.terminationStatus,
            stdout: String(decoding: try Data(contentsOf: stdoutURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: stderrURL), as: UTF8.self)
        )
    }
}
