import Foundation

/// Latency percentiles and process memory.
enum Stats {
    static func percentile(_ sorted: [Int64], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let index = min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)
        return Double(sorted[max(0, index)]) / 1_000_000
    }

    /// Resident memory of a process, in bytes (from /proc/PID/status).
    static func residentMemory(pid: Int32 = getpid()) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
            return kilobytes * 1024
        }
        return 0
    }

    /// glibc's per-arena heap figures (`malloc_stats`, on standard error), when
    /// `HERALD_BENCH_MALLOC_STATS` is set: live heap against what resident memory counts.
    static func printMallocStats(_ label: String) {
        guard ProcessInfo.processInfo.environment["HERALD_BENCH_MALLOC_STATS"] != nil,
            let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_stats")
        else { return }
        FileHandle.standardError.write(Data("malloc_stats \(label):\n".utf8))
        unsafeBitCast(symbol, to: (@convention(c) () -> Void).self)()
    }

    /// How this benchmark was built, printed with its figures.
    #if DEBUG
    static let build = "debug"
    #else
    static let build = "release"
    #endif

    static func format(_ value: Double, _ digits: Int = 1) -> String {
        String(format: "%.\(digits)f", value)
    }
}
