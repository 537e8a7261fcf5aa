import Foundation

/// What a program a test ran did: its exit status and everything it wrote.
public struct ProcessResult: Sendable, CustomStringConvertible {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }

    public var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
}

/// Runs a program as a test would from a shell.
public enum ChildProcess {
    /// Runs `executable` on a thread of its own (never blocking the concurrency pool a
    /// server in the same process needs), with no standard input, terminating it after
    /// `timeout` seconds.
    public static func run(
        _ executable: URL,
        _ arguments: [String],
        environment: [String: String],
        timeout: Double
    ) async throws
        -> ProcessResult
    {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                do {
                    continuation.resume(returning: try runBlocking(executable, arguments, environment, timeout))
                } catch {
                    continuation.resume(throwing: error)
                }
            }.start()
        }
    }

    private static func runBlocking(
        _ binary: URL,
        _ arguments: [String],
        _ environment: [String: String],
        _ timeout: Double
    ) throws
        -> ProcessResult
    {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-run-\(UUID().uuidString)")
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
        let killer = DispatchWorkItem { [process] in kill(process.processIdentifier, SIGTERM) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
        // Neither waitUntilExit(), which waits on this thread's run loop (a CI run stalled
        // 300 s in ServeStartupTests), nor Foundation's `isRunning`, which can miss the exit
        // for good (``ChildExit``: another stall, heraldctl a zombie).
        let status = ChildExit(process).waitBlocking()
        killer.cancel()
        try stdout.close()
        try stderr.close()
        return ProcessResult(
            status: status,
            stdout: String(decoding: try Data(contentsOf: stdoutURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: stderrURL), as: UTF8.self)
        )
    }
}
