import ArgumentParser
import Foundation
import NIOConcurrencyHelpers

/// `herald-bench load`: one load-generator process. Opens its connections, prints
/// `ready N`, then answers commands on standard input: `report` prints the latencies
/// received since the last report into a file and `report COUNT LAST_NS FILE DISTINCT
/// DUPLICATES REDELIVERED` (the copies since the last report, counted with
/// `--count-copies`, else zeros); `status` prints `status CONNECTED CLOSED`; `exit` ends.
/// With a `--keep-alive` below 900 seconds each device pings twice per keepalive.
struct LoadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "load", abstract: "(internal) a load-generator process", shouldDisplay: false)

    @Option var host = "127.0.0.1"
    @Option var port: Int
    /// Source addresses to spread connections over (ephemeral ports run out otherwise).
    @Option(parsing: .upToNextOption) var sourceIP: [String] = ["127.0.0.1"]
    /// Client ids, one per line, each optionally followed by a space and its own password.
    @Option var clients: String
    @Option var username: String?
    @Option var password: String?
    /// `{id}` in the topic is replaced by the client id.
    @Option var subscribe: String?
    /// Count copies by msg_id per device (Herald's payloads), to tell duplicates.
    @Flag var countCopies = false
    /// The keepalive the devices ask for (seconds).
    @Option var keepAlive: UInt16 = 900

    func run() async throws {
        let lines = try String(contentsOfFile: clients, encoding: .utf8).split(separator: "\n")
        let devices = lines.map { line in
            let fields = line.split(separator: " ", maxSplits: 1).map(String.init)
            return LoadGenerator.Device(
                clientID: fields[0],
                username: username,
                password: fields.count > 1 ? fields[1] : password,
                subscribe: subscribe?.replacingOccurrences(of: "{id}", with: fields[0])
            )
        }
        let generator = LoadGenerator(countsCopies: countCopies, keepAlive: keepAlive)
        try await withThrowingTaskGroup(of: Void.self) { group in
            // From the first connection on: connecting them all may take longer than a keepalive.
            if keepAlive < 900 {
                group.addTask { [keepAlive] in
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .seconds(Double(keepAlive) / 2))
                        generator.pingAll()
                    }
                }
            }
            defer { group.cancelAll() }
            try await generator.connect(devices, host: host, port: port, sourceIPs: sourceIP)
            say("ready \(generator.connected.withLockedValue { $0 })")
            try await answerCommands(generator)
        }
    }

    /// Answers the orchestrator's commands on standard input until `exit` or its end.
    private func answerCommands(_ generator: LoadGenerator) async throws {
        while let command = Swift.readLine() {
            switch command {
            case "report":
                let samples = generator.samples.withLockedValue { samples -> [Int64] in
                    defer { samples = [] }
                    return samples
                }
                let file = NSTemporaryDirectory() + "herald-bench-\(getpid())-\(UUID().uuidString).samples"
                let copies = generator.copies.withLockedValue { copies -> CopyTally in
                    defer { copies = CopyTally() }
                    return copies
                }
                try samples.map(String.init).joined(separator: "\n").write(toFile: file, atomically: false, encoding: .utf8)
                say("report \(samples.count) \(generator.lastReceipt.withLockedValue { $0 }) \(file) \(copies.fields)")
            case "status":
                say("status \(generator.connected.withLockedValue { $0 }) \(generator.closed.withLockedValue { $0 })")
            case "exit":
                await generator.closeAll()
                return
            default:
                continue
            }
        }
        await generator.closeAll()
    }
}

/// A line on standard output, flushed at once (the orchestrator waits for it).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
