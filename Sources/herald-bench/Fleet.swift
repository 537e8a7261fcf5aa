import Foundation

/// A set of load-generator processes holding device connections.
struct Fleet {
    let processes: [ChildProcess]
    /// The client lists handed to the processes (they may hold device secrets).
    var files: [String] = []

    /// Starts `processes` load generators sharing `clientIDs`, each spreading its connections
    /// over its own 127.0.0.x source addresses; returns once every connection is up.
    static func start(
        clientIDs: [String],
        processes count: Int,
        port: Int,
        username: String?,
        password: String?,
        subscribe: String?
    ) async throws -> Fleet {
        let executable =
            CommandLine.arguments[0].hasPrefix("/")
            ? CommandLine.arguments[0] : FileManager.default.currentDirectoryPath + "/" + CommandLine.arguments[0]
        var processes: [ChildProcess] = []
        var files: [String] = []
        let perProcess = (clientIDs.count + count - 1) / count
        for index in 0..<count {
            let slice = clientIDs.dropFirst(index * perProcess).prefix(perProcess)
            guard !slice.isEmpty else { continue }
            let file = NSTemporaryDirectory() + "herald-bench-clients-\(getpid())-\(index)"
            try slice.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
            files.append(file)
            var arguments = ["load", "--port", "\(port)", "--clients", file, "--source-ip"]
            arguments += (0..<8).map { "127.0.\(index + 1).\($0 + 2)" }
            if let username { arguments += ["--username", username] }
            if let password { arguments += ["--password", password] }
            if let subscribe { arguments += ["--subscribe", subscribe] }
            processes.append(try ChildProcess(executable, arguments))
        }
        let fleet = Fleet(processes: processes, files: files)
        do {
            var connected = 0
            for process in processes { connected += Int(try await process.expect("ready ")) ?? 0 }
            guard connected == clientIDs.count else { throw BenchError("only \(connected) of \(clientIDs.count) devices connected") }
        } catch {
            fleet.stop()
            throw error
        }
        return fleet
    }

    /// Latencies (ns) received since the last report, and the latest receipt time.
    func report() async throws -> (samples: [Int64], lastReceipt: Int64) {
        var samples: [Int64] = []
        var last: Int64 = 0
        for process in processes { process.send("report") }
        for process in processes {
            let fields = try await process.expect("report ").split(separator: " ")
            guard fields.count == 3 else { throw BenchError("bad report") }
            last = max(last, Int64(fields[1]) ?? 0)
            let text = try String(contentsOfFile: String(fields[2]), encoding: .utf8)
            try? FileManager.default.removeItem(atPath: String(fields[2]))
            samples += text.split(separator: "\n").compactMap { Int64($0) }
        }
        return (samples, last)
    }

    /// Waits until `expected` messages arrived (or `timeout` passed), then reports.
    func collect(expected: Int, timeout: Duration = .seconds(120)) async throws -> (samples: [Int64], lastReceipt: Int64) {
        var all: [Int64] = []
        var last: Int64 = 0
        let deadline = ContinuousClock.now + timeout
        var quietSince = ContinuousClock.now
        while all.count < expected, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            let (samples, receipt) = try await report()
            if !samples.isEmpty { quietSince = .now }
            all += samples
            last = max(last, receipt)
            // Nothing more for 10 s: what is missing isn't coming.
            if ContinuousClock.now - quietSince > .seconds(10) { break }
        }
        return (all, last)
    }

    func stop() {
        for process in processes { process.send("exit") }
        for process in processes { process.terminate() }
        for file in files { try? FileManager.default.removeItem(atPath: file) }
    }
}
