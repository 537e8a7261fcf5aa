import Foundation

/// One measured run: a client, its connections, and what it achieved.
struct BenchResult: Sendable {
    var client: String
    /// Connections (HeraldAPNs: the pool size; aioapns: what its pool opened).
    var connections: Int
    /// How the client kept requests in flight.
    var concurrency: String
    var sent: Int
    var failed: Int
    var seconds: Double
    var p50: Double
    var p90: Double
    var p99: Double
    /// What the sandbox says it accepted during the run.
    var accepted: Int?
    var failures: [String: Int] = [:]

    var rate: Double { Double(sent) / seconds }

    /// Percentiles in milliseconds from latencies in nanoseconds.
    static func percentiles(_ nanoseconds: [Int64]) -> (p50: Double, p90: Double, p99: Double) {
        let sorted = nanoseconds.sorted()
        func at(_ fraction: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            return Double(sorted[min(sorted.count - 1, Int(fraction * Double(sorted.count)))]) / 1_000_000
        }
        return (at(0.50), at(0.90), at(0.99))
    }
}

/// The table the benchmark prints.
enum BenchReport {
    static func table(_ results: [BenchResult]) -> String {
        var lines = [
            pad(["client", "conns", "concurrency", "notif/s", "p50 ms", "p90 ms", "p99 ms", "accepted", "failed"]),
            String(repeating: "-", count: 104),
        ]
        for result in results {
            lines.append(
                pad([
                    result.client,
                    String(result.connections),
                    result.concurrency,
                    grouped(Int(result.rate.rounded())),
                    String(format: "%.2f", result.p50),
                    String(format: "%.2f", result.p90),
                    String(format: "%.2f", result.p99),
                    result.accepted.map(grouped) ?? "?",
                    String(result.failed),
                ])
            )
        }
        return lines.joined(separator: "\n")
    }

    static func grouped(_ value: Int) -> String {
        let digits = String(value)
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return out
    }

    private static func pad(_ columns: [String]) -> String {
        let widths = [12, 6, 20, 10, 9, 9, 9, 10, 7]
        return zip(columns, widths).enumerated().map { index, pair in
            let (text, width) = pair
            let padding = String(repeating: " ", count: max(0, width - text.count))
            return index == 0 || index == 2 ? text + padding : padding + text
        }.joined(separator: "  ")
    }
}
