import Foundation
import NIOConcurrencyHelpers

/// A helper process (a load generator, mosquitto) driven over its standard input and output.
final class ChildProcess: @unchecked Sendable {
    // Process and FileHandle aren't Sendable; they are set once here and used by one task.
    let process: Process
    private let input: FileHandle
    private let lines: AsyncStream<String>
    private let iterator: NIOLockedValueBox<AsyncStream<String>.Iterator>

    init(_ executable: String, _ arguments: [String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.standardError
        input = stdin.fileHandleForWriting
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        lines = stream
        iterator = NIOLockedValueBox(stream.makeAsyncIterator())
        let reader = stdout.fileHandleForReading
        try process.run()
        Thread.detachNewThread {
            var pending = Data()
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    continuation.yield(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
            continuation.finish()
        }
    }

    var pid: Int32 { process.processIdentifier }

    /// Writes a line to the process; nothing happens when it has exited (broken pipe).
    func send(_ line: String) {
        try? input.write(contentsOf: Data((line + "\n").utf8))
    }

    /// The next line the process prints; nil when it exits.
    func readLine() async -> String? {
        var iterator = self.iterator.withLockedValue { $0 }
        let line = await iterator.next()
        self.iterator.withLockedValue { $0 = iterator }
        return line
    }

    /// The next line that starts with `prefix`.
    func expect(_ prefix: String) async throws -> String {
        while let line = await readLine() {
            if line.hasPrefix(prefix) { return String(line.dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces) }
        }
        throw BenchError("\(process.executableURL?.lastPathComponent ?? "child") exited before printing '\(prefix)'")
    }

    /// SIGTERM, then SIGKILL if the process is still running after two seconds: children
    /// inherit this process's blocked signals (ServiceLifecycle blocks SIGTERM to handle
    /// it), and mosquitto, for one, never sees a blocked SIGTERM.
    func terminate() {
        if process.isRunning { process.terminate() }
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
