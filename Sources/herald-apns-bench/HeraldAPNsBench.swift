import ArgumentParser
import Crypto
import Foundation
import HeraldAPNsSandbox
import HeraldCore
import Logging
import NIOHTTP1

/// `herald-apns-bench`: notifications per second from HeraldAPNs to the APNs sandbox
/// over 1, 2 and 4 connections, with latency percentiles, then the PyPI client aioapns
/// against the same sandbox, and the ratio. Build with `-c release` to measure.
@main
struct HeraldAPNsBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald-apns-bench",
        abstract: "Measures HeraldAPNs (and aioapns) against the APNs sandbox."
    )

    @Option(help: "Notifications per measured run.")
    var count = 100_000

    @Option(help: "Notifications sent before each measured run, not measured.")
    var warmup = 10_000

    @Option(parsing: .upToNextOption, help: "Pool sizes to measure HeraldAPNs with.")
    var connections: [Int] = [1, 2, 4]

    /// More than about 100 in flight measured slower here, not faster: every open stream
    /// costs HTTP/2 bookkeeping on both sides, and the answers come in under 10 ms anyway.
    @Option(help: "HeraldAPNs: concurrent senders (notifications in flight).")
    var inFlight = 100

    @Option(help: "Distinct device tokens the notifications go to.")
    var deviceTokens = 1000

    @Option(help: "The apns-sandbox executable (default: next to this one).")
    var sandbox: String?

    @Option(help: "apns-sandbox's event-loop threads (default: one per core).")
    var sandboxThreads: Int?

    @Flag(help: "Run the sandbox inside this process instead of as apns-sandbox.")
    var inProcess = false

    @Flag(help: "Measure HeraldAPNs only.")
    var skipAioapns = false

    @Option(help: "Python interpreter with aioapns installed.")
    var python = "python3"

    @Option(help: "The aioapns driver script.")
    var aioapnsScript = "scripts/bench-aioapns.py"

    @Option(help: "aioapns: notifications per asyncio.gather.")
    var aioapnsBatch = 500

    @Option(help: "aioapns: its pool's max_connections (its default is 10).")
    var aioapnsConnections = 10

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        let logger = Logger(label: "herald.apns-bench")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-apns-bench-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        if inProcess {
            let sandbox = try await APNsSandbox.start(configuration: APNsSandbox.Configuration(transport: .tls), logger: logger)
            let inspection = try await SandboxInspectionServer.bind(sandbox: sandbox, logger: logger)
            let certificatePath = directory.appendingPathComponent("sandbox.pem").path
            try sandbox.certificatePEM!.write(toFile: certificatePath, atomically: true, encoding: .utf8)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await inspection.run() }
                defer { group.cancelAll() }
                try await measure(
                    port: sandbox.port,
                    inspectPort: inspection.port,
                    certificatePath: certificatePath,
                    directory: directory,
                    where: "in this process",
                    logger: logger
                )
            }
            await sandbox.shutdown()
        } else {
            let executable =
                sandbox.map { URL(fileURLWithPath: $0) }
                ?? Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent("apns-sandbox")
            let process = try SandboxProcess.start(
                executable: executable,
                certificatePath: directory.appendingPathComponent("sandbox.pem").path,
                threads: sandboxThreads
            )
            defer { process.stop() }
            try await measure(
                port: process.port,
                inspectPort: process.inspectPort,
                certificatePath: process.certificatePath,
                directory: directory,
                where: "a separate apns-sandbox process",
                logger: logger
            )
            if let resident = process.residentMiB { print("apns-sandbox resident memory at the end: \(resident) MiB") }
        }
    }

    private func measure(port: Int, inspectPort: Int, certificatePath: String, directory: URL, where place: String, logger: Logger) async throws {
        let inspection = InspectionClient(host: "127.0.0.1", port: inspectPort)
        let key = P256.Signing.PrivateKey()
        let keyID = "BENCHKEY01"
        let teamID = "BENCHTEAM1"
        let bundleID = "com.example.herald.bench"
        let keyPath = directory.appendingPathComponent("AuthKey_\(keyID).p8").path
        try key.pemRepresentation.write(toFile: keyPath, atomically: true, encoding: .utf8)
        _ = try await inspection.json(
            .POST,
            "/keys",
            object: ["key_id": keyID, "team_id": teamID, "public_key_pem": key.publicKey.pemRepresentation]
        )
        let certificatePEM = try String(contentsOfFile: certificatePath, encoding: .utf8)

        print("HeraldAPNs benchmark: \(BenchReport.grouped(count)) notifications per run after \(BenchReport.grouped(warmup)) warm-up")
        print("APNs sandbox: TLS 1.3, ALPN h2, token auth (ES256), port \(port), in \(place); \(ProcessInfo.processInfo.activeProcessorCount) cores")
        print("")

        var results: [BenchResult] = []
        let herald = HeraldRun(
            credentials: APNsCredentials(
                auth: .token(keyID: keyID, teamID: teamID, privateKeyPEM: key.pemRepresentation),
                bundleID: bundleID,
                environment: .sandbox
            ),
            port: port,
            certificatePEM: certificatePEM,
            count: count,
            warmup: warmup,
            inFlight: inFlight,
            deviceTokens: (0..<max(deviceTokens, 1)).map { String(format: "%064x", 0xA000_0000 + $0) },
            inspection: inspection,
            logger: logger
        )
        for pool in connections {
            let result = try await herald.run(connections: pool)
            report(result)
            results.append(result)
        }
        var peer: BenchResult?
        if !skipAioapns {
            let aioapns = AioapnsRun(
                python: python,
                script: aioapnsScript,
                port: port,
                certificatePath: certificatePath,
                keyPath: keyPath,
                keyID: keyID,
                teamID: teamID,
                topic: bundleID,
                count: count,
                warmup: min(warmup, 5_000),
                batch: aioapnsBatch,
                maxConnections: aioapnsConnections,
                inspection: inspection
            )
            let result = try await aioapns.run()
            report(result)
            results.append(result)
            peer = result
        }

        print("")
        print(BenchReport.table(results))
        print("")
        let best = results.filter { $0.client == "HeraldAPNs" }.max { $0.rate < $1.rate }
        if let best {
            print("HeraldAPNs best: \(BenchReport.grouped(Int(best.rate))) notifications/s over \(best.connections) connection(s)")
        }
        if let peer, let best {
            print("aioapns: \(BenchReport.grouped(Int(peer.rate))) notifications/s")
            let ratios = results.filter { $0.client == "HeraldAPNs" }.map { "\($0.connections) conn \(String(format: "%.2f", $0.rate / peer.rate))x" }
            print("Ratio HeraldAPNs / aioapns: \(String(format: "%.2f", best.rate / peer.rate))x at best (\(ratios.joined(separator: ", ")))")
            let met = best.rate >= 25_000 && best.rate / peer.rate >= 3
            print("Goal (>= 25,000/s and >= 3x aioapns): \(met ? "met" : "NOT met")")
        }
    }

    private func report(_ result: BenchResult) {
        let rate = BenchReport.grouped(Int(result.rate))
        var line = "\(result.client) over \(result.connections) connection(s): \(rate)/s in \(String(format: "%.2f", result.seconds)) s"
        if !result.failures.isEmpty { line += "; failures: \(result.failures)" }
        if let accepted = result.accepted, accepted != result.sent - result.failed {
            line += "; the sandbox accepted \(accepted) of \(result.sent)"
        }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
