import Foundation
import NIOHTTP1

/// Runs scripts/bench-aioapns.py (the PyPI client aioapns) against the same sandbox.
struct AioapnsRun {
    var python: String
    var script: String
    var port: Int
    var certificatePath: String
    var keyPath: String
    var keyID: String
    var teamID: String
    var topic: String
    var count: Int
    var warmup: Int
    var batch: Int
    var maxConnections: Int
    var inspection: InspectionClient

    func run() async throws -> BenchResult {
        _ = try await inspection.json(.DELETE, "/notifications")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            python, script,
            "--host", "127.0.0.1", "--port", String(port), "--ca-file", certificatePath, "--key-file", keyPath,
            "--key-id", keyID, "--team-id", teamID, "--topic", topic,
            "--count", String(count), "--warmup", String(warmup), "--batch", String(batch),
            "--max-connections", String(maxConnections),
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0,
            let line = text.split(separator: "\n").last,
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let seconds = object["seconds"] as? Double
        else {
            throw InspectionClient.Failure(description: "aioapns driver failed (status \(process.terminationStatus)): \(text)")
        }
        // The warm-up went to the sandbox too: count only what came after it.
        let accepted = try await inspection.acceptedCount() - warmup
        return BenchResult(
            client: "aioapns",
            connections: object["connections"] as? Int ?? 0,
            concurrency: "gather \(batch), pool \(maxConnections)",
            sent: object["sent"] as? Int ?? count,
            failed: object["failed"] as? Int ?? 0,
            seconds: seconds,
            p50: object["p50_ms"] as? Double ?? 0,
            p90: object["p90_ms"] as? Double ?? 0,
            p99: object["p99_ms"] as? Double ?? 0,
            accepted: accepted,
            failures: (object["failures"] as? [String: Int]) ?? [:]
        )
    }
}
