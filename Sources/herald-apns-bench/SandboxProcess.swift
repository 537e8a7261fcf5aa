import Foundation

/// The `apns-sandbox` executable, started as a child process so client and server
/// don't share one process.
final class SandboxProcess {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let port: Int
    let inspectPort: Int
    let certificatePath: String
    private let process: Process

    private init(process: Process, port: Int, inspectPort: Int, certificatePath: String) {
        self.process = process
        self.port = port
        self.inspectPort = inspectPort
        self.certificatePath = certificatePath
    }

    /// Starts `executable` on free ports and waits for its "apns-sandbox ready" line.
    static func start(executable: URL, certificatePath: String, threads: Int?) throws -> SandboxProcess {
        let process = Process()
        process.executableURL = executable
        process.arguments = [
            "--port", "0", "--inspect-port", "0", "--certificate-out", certificatePath, "--log-level", "warning",
        ]
        if let threads { process.arguments! += ["--threads", String(threads)] }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var text = ""
        while !text.contains("apns-sandbox ready") || !text.hasSuffix("\n") {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else {
                process.terminate()
                throw Failure(description: "apns-sandbox exited before it was ready: \(text)")
            }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("apns-sandbox ready") }) else {
            throw Failure(description: "no ready line")
        }
        var fields: [String: String] = [:]
        for field in line.split(separator: " ") {
            let parts = field.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        guard let port = fields["port"].flatMap(Int.init), let inspectPort = fields["inspect-port"].flatMap(Int.init) else {
            process.terminate()
            throw Failure(description: "unreadable ready line: \(line)")
        }
        return SandboxProcess(process: process, port: port, inspectPort: inspectPort, certificatePath: certificatePath)
    }

    /// SIGTERM (the sandbox shuts down gracefully) and wait.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    /// The process's resident set size in MiB, from /proc.
    var residentMiB: Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return kilobytes / 1024
    }
}
