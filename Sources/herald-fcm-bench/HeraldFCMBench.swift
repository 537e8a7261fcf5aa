import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldFCM
import Logging
import NIOCore
import NIOSSL

/// `herald-fcm-bench`: HeraldFCM's client against the FCM sandbox in a separate process
/// (`fcm-sandbox --count-only`), then the peer in the same run: google-auth for the access
/// token and httpx over HTTP/2 for the sends (scripts/bench-fcm-peer.py), the way an
/// operator's own Python sender is written. Prints messages per second, latency
/// percentiles, what the sandbox counted, and the ratio.
@main
struct HeraldFCMBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald-fcm-bench",
        abstract: "HeraldFCM against the FCM sandbox (separate process), and google-auth + httpx as the peer."
    )

    @Option(help: "Messages per client.") var count = 100_000
    @Option(help: "Messages first, not measured.") var warmup = 5_000
    @Option(help: "HeraldFCM: requests in flight.") var concurrency = 1_000
    @Option(help: "The peer: requests in flight (asyncio tasks).") var peerConcurrency = 200
    @Option(help: "The peer: messages (0: as many as Herald).") var peerCount = 0
    @Option(help: "Python with google-auth and httpx[http2] (skip the peer when empty).") var python = ""
    @Option(help: "The peer's script.") var peerScript = "scripts/bench-fcm-peer.py"
    @Option(help: "The fcm-sandbox executable (default: beside this one).") var sandbox: String?

    func run() async throws {
        let own = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("herald-fcm-bench-\(getpid())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let keyPath = work.appendingPathComponent("key.json").path
        let caPath = work.appendingPathComponent("ca.pem").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: sandbox ?? own.appendingPathComponent("fcm-sandbox").path)
        process.arguments = ["--count-only", "--project", "herald-bench", "--key-file-out", keyPath, "--certificate-out", caPath]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        var text = ""
        while !text.contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw ValidationError("fcm-sandbox exited: \(text)") }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard
            let url = text.split(separator: " ").first(where: { $0.hasPrefix("url=") }).map({
                String($0.dropFirst(4)).trimmingCharacters(in: .whitespacesAndNewlines)
            })
        else { throw ValidationError("no url in \(text)") }
        let account = try FCMServiceAccount.parse(try Data(contentsOf: URL(fileURLWithPath: keyPath)))
        let certificate = try String(contentsOfFile: caPath, encoding: .utf8)
        let stats = try StatsClient(url: url, certificatePEM: certificate)

        let machine = ProcessInfo.processInfo.activeProcessorCount
        print("herald-fcm-bench: \(count) messages per client, sandbox in a separate process at \(url), \(machine) cores")
        var logger = Logger(label: "herald-fcm-bench")
        logger.logLevel = .error
        let client = FCMClient(endpoints: .init(sendBase: url, tokenURL: nil, trustedCertificatePEMs: [certificate]), logger: logger)
        let push = try JSONDecoder().decode(
            PushRequest.self,
            from: Data(
                #"{"platform":"android","audience":"all","notification":{"android":{"alert":"Your order shipped","title":"Shop","extras":{"order":"42"}}},"options":{"time_to_live":3600}}"#
                    .utf8
            )
        ).validated()
        let messages = (0..<1000).map { n in
            FCMMessage(
                push: push,
                msgID: "bench\(n)",
                token: "bench\(n):APA91b" + String(repeating: "x", count: 140),
                expiresAt: Date().addingTimeInterval(3600)
            )
        }
        _ = try await Self.send(client, account: account, messages: messages, count: warmup, concurrency: concurrency)
        let before = try await stats.received()
        let cpuBefore = (own: Self.ownCPUSeconds(), sandbox: Self.cpuSeconds(process.processIdentifier))
        let herald = try await Self.send(client, account: account, messages: messages, count: count, concurrency: concurrency)
        let cpuAfter = (own: Self.ownCPUSeconds(), sandbox: Self.cpuSeconds(process.processIdentifier))
        let accepted = try await stats.received() - before
        print(
            String(
                format: "CPU per message: HeraldFCM %.1f µs, the sandbox %.1f µs",
                (cpuAfter.own - cpuBefore.own) / Double(count) * 1e6,
                (cpuAfter.sandbox - cpuBefore.sandbox) / Double(count) * 1e6
            )
        )
        try await client.shutdown()
        var rows = [Row(client: "HeraldFCM", concurrency: "\(concurrency) in flight", result: herald, accepted: accepted)]

        if !python.isEmpty {
            let peerCount = self.peerCount > 0 ? self.peerCount : count
            let before = try await stats.received()
            let peer = try Self.peer(
                python: python,
                script: peerScript,
                url: url,
                keyPath: keyPath,
                caPath: caPath,
                count: peerCount,
                warmup: min(warmup, peerCount / 10),
                concurrency: peerConcurrency
            )
            let accepted = try await stats.received() - before - min(warmup, peerCount / 10)
            rows.append(Row(client: "google-auth+httpx", concurrency: "\(peerConcurrency) tasks", result: peer, accepted: accepted))
        }
        try await stats.http.shutdown()
        print(Row.table(rows))
        if rows.count == 2 {
            print(String(format: "ratio: HeraldFCM %.1fx the peer's messages/s", rows[0].result.rate / rows[1].result.rate))
        }
    }

    /// This process's user and system CPU time.
    static func ownCPUSeconds() -> Double {
        cpuSeconds(getpid())
    }

    /// A process's user and system CPU time, from /proc.
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, utime 14 and stime 15 (1-based, counting pid and name).
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    struct Measured {
        var sent: Int
        var failed: Int
        var seconds: Double
        var p50: Double
        var p99: Double
        var rate: Double { Double(sent) / seconds }
    }

    /// Sends `count` messages keeping `concurrency` in flight.
    static func send(_ client: FCMClient, account: FCMServiceAccount, messages: [FCMMessage], count: Int, concurrency: Int) async throws -> Measured {
        let clock = ContinuousClock()
        let start = clock.now
        var latencies: [Int64] = []
        latencies.reserveCapacity(count)
        var failed = 0
        try await withThrowingTaskGroup(of: (Bool, Int64).self) { group in
            var next = 0
            func add() {
                let message = messages[next % messages.count]
                next += 1
                group.addTask {
                    let began = clock.now
                    let outcome = await client.send(message, account: account)
                    let took = clock.now - began
                    let nanoseconds = took.components.seconds * 1_000_000_000 + took.components.attoseconds / 1_000_000_000
                    if case .delivered = outcome { return (true, nanoseconds) }
                    return (false, nanoseconds)
                }
            }
            while next < min(concurrency, count) { add() }
            while let (ok, latency) = try await group.next() {
                latencies.append(latency)
                if !ok { failed += 1 }
                if next < count { add() }
            }
        }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        latencies.sort()
        func at(_ fraction: Double) -> Double {
            latencies.isEmpty ? 0 : Double(latencies[min(latencies.count - 1, Int(fraction * Double(latencies.count)))]) / 1e6
        }
        return Measured(sent: count - failed, failed: failed, seconds: seconds, p50: at(0.5), p99: at(0.99))
    }

    static func peer(
        python: String,
        script: String,
        url: String,
        keyPath: String,
        caPath: String,
        count: Int,
        warmup: Int,
        concurrency: Int
    ) throws -> Measured {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            python, script, "--url", url, "--key-file", keyPath, "--ca-file", caPath, "--count", String(count), "--warmup", String(warmup),
            "--concurrency", String(concurrency),
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0, let line = text.split(separator: "\n").last,
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let seconds = object["seconds"] as? Double
        else { throw ValidationError("the peer failed (status \(process.terminationStatus)): \(text)") }
        return Measured(
            sent: object["sent"] as? Int ?? 0,
            failed: object["failed"] as? Int ?? 0,
            seconds: seconds,
            p50: object["p50_ms"] as? Double ?? 0,
            p99: object["p99_ms"] as? Double ?? 0
        )
    }

    struct Row {
        var client: String
        var concurrency: String
        var result: Measured
        var accepted: Int

        static func table(_ rows: [Row]) -> String {
            func pad(_ columns: [String]) -> String {
                let widths = [-18, -16, 10, 9, 9, 10, 7]
                return zip(columns, widths).map { text, width in
                    let padding = String(repeating: " ", count: max(0, abs(width) - text.count))
                    return width < 0 ? text + padding : padding + text
                }.joined(separator: " ")
            }
            var lines = [pad(["client", "concurrency", "msg/s", "p50 ms", "p99 ms", "accepted", "failed"])]
            for row in rows {
                lines.append(
                    pad([
                        row.client, row.concurrency, String(Int(row.result.rate.rounded())), String(format: "%.2f", row.result.p50),
                        String(format: "%.2f", row.result.p99), String(row.accepted), String(row.result.failed),
                    ])
                )
            }
            return lines.joined(separator: "\n")
        }
    }
}

/// Reads the sandbox's count of messages it took (`GET /sandbox/stats`).
struct StatsClient {
    let http: HTTPClient
    let url: String

    init(url: String, certificatePEM: String) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem)])
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        self.url = url
    }

    func received() async throws -> Int {
        let response = try await http.execute(HTTPClientRequest(url: url + "/sandbox/stats"), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 16)
        let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        return object?["received"] as? Int ?? 0
    }
}
