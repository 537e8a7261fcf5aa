import Foundation
import HeraldAPNs
import HeraldCore
import Logging
import NIOHTTP1
import Synchronization

/// Measures ``APNsClient`` against the sandbox: a warm-up, then `count` notifications
/// sent by `inFlight` concurrent senders, each send timed with ContinuousClock.
struct HeraldRun: Sendable {
    var credentials: APNsCredentials
    var port: Int
    var certificatePEM: String
    var count: Int
    var warmup: Int
    var inFlight: Int
    var deviceTokens: [String]
    var inspection: InspectionClient
    var logger: Logger

    func run(connections: Int) async throws -> BenchResult {
        var configuration = APNsClient.Configuration(host: "127.0.0.1", port: port, transport: .tlsTrusting(certificatePEMs: [certificatePEM]))
        configuration.tlsServerName = "localhost"
        configuration.connectionCount = connections
        configuration.requestTimeout = .seconds(30)
        let client = try APNsClient(credentials: credentials, configuration: configuration, logger: logger)

        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await client.run() }
            defer { group.cancelAll() }

            let ready = ContinuousClock.now + .seconds(10)
            while client.openConnectionCount < connections {
                guard ContinuousClock.now < ready else { throw InspectionClient.Failure(description: "connections not up") }
                try await Task.sleep(for: .milliseconds(5))
            }
            _ = try await send(client, count: warmup)
            _ = try await inspection.json(.DELETE, "/notifications")

            let started = ContinuousClock.now
            let (latencies, failures) = try await send(client, count: count)
            let elapsed = started.duration(to: .now)
            let accepted = try await inspection.acceptedCount()
            let (p50, p90, p99) = BenchResult.percentiles(latencies)
            return BenchResult(
                client: "HeraldAPNs",
                connections: connections,
                concurrency: "\(inFlight) senders",
                sent: count,
                failed: failures.values.reduce(0, +),
                seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
                p50: p50,
                p90: p90,
                p99: p99,
                accepted: accepted,
                failures: failures
            )
        }
    }

    /// Sends `count` notifications from `inFlight` tasks taking indices from a shared counter.
    private func send(_ client: APNsClient, count: Int) async throws -> (latencies: [Int64], failures: [String: Int]) {
        let next = Counter()
        let tokens = deviceTokens
        let senders = min(inFlight, max(count, 1))
        return try await withThrowingTaskGroup(of: ([Int64], [String: Int]).self) { group in
            for _ in 0..<senders {
                group.addTask {
                    var latencies: [Int64] = []
                    latencies.reserveCapacity(count / senders + 1)
                    var failures: [String: Int] = [:]
                    while true {
                        let index = next.value.wrappingAdd(1, ordering: .relaxed).oldValue
                        guard index < count else { break }
                        let payload = #"{"aps":{"alert":{"title":"Herald","body":"Benchmark notification \#(index)"}}}"#
                        let notification = APNsNotification(deviceToken: tokens[index % tokens.count], payload: Array(payload.utf8))
                        let started = ContinuousClock.now
                        let outcome = try await client.send(notification)
                        let (seconds, attoseconds) = started.duration(to: .now).components
                        latencies.append(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
                        if case .delivered = outcome { continue }
                        failures["\(outcome)", default: 0] += 1
                    }
                    return (latencies, failures)
                }
            }
            var latencies: [Int64] = []
            latencies.reserveCapacity(count)
            var failures: [String: Int] = [:]
            for try await (part, partFailures) in group {
                latencies += part
                failures.merge(partFailures, uniquingKeysWith: +)
            }
            return (latencies, failures)
        }
    }
}

/// Hands out notification indices to the senders.
final class Counter: Sendable {
    let value = Atomic<Int>(0)
}
