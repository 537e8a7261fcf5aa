import Foundation

/// The built `herald` executable, run as a child process.
public enum HeraldBinary {
    /// `HERALD_BINARY`, else `herald` next to the test bundle, else under `.build/debug`.
    public static let url: URL? = {
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

    public typealias Result = ProcessResult

    /// Runs the binary on a thread of its own, terminating it after `timeout` seconds.
    public static func run(_ binary: URL, _ arguments: [String], environment: [String: String], timeout: Double) async throws -> Result {
        try await ChildProcess.run(binary, arguments, environment: environment, timeout: timeout)
    }

    /// Process ids of PostgreSQL servers whose command line names `dataDirectory`.
    public static func postgresProcesses(dataDirectory: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry in
            guard let pid = Int32(entry), let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            let command = String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
            return command.contains("postgres") && command.contains(dataDirectory) ? pid : nil
        }
    }

    /// Stops a PostgreSQL a failed run left behind, so a failing test doesn't leak it.
    public static func stopPostgres(dataDirectory: String) {
        for pid in postgresProcesses(dataDirectory: dataDirectory) { kill(pid, SIGQUIT) }
    }
}
