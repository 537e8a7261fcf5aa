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
        let perProcess = (clientIDs.count + count - 1) / count
        let groups = (0..<count).map { index in
            (clientIDs: Array(clientIDs.dropFirst(index * perProcess).prefix(perProcess)), port: port)
        }
        return try await start(groups: groups.filter { !$0.clientIDs.isEmpty }, username: username, password: password, subscribe: subscribe)
    }

    /// Starts one load generator per group, connecting its clients to its port (a
    /// cluster's devices each on their node), with source addresses as above.
    /// `countCopies`: the devices count what they receive by msg_id (``receipts()``).
    static func start(
        groups: [(clientIDs: [String], port: Int)],
        username: String?,
        password: String?,
        subscribe: String?,
        countCopies: Bool = false,
        keepAlive: Int? = nil
    ) async throws -> Fleet {
        let executable =
            CommandLine.arguments[0].hasPrefix("/")
            ? CommandLine.arguments[0] : FileManager.default.currentDirectoryPath + "/" + CommandLine.arguments[0]
        var processes: [ChildProcess] = []
        var files: [String] = []
        for (index, group) in groups.enumerated() {
            let file = NSTemporaryDirectory() + "herald-bench-clients-\(getpid())-\(index)"
            try group.clientIDs.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
            files.append(file)
            var arguments = ["load", "--port", "\(group.port)", "--clients", file, "--source-ip"]
            arguments += (0..<8).map { "127.0.\(index + 1).\($0 + 2)" }
            if let username { arguments += ["--username", username] }
            if let password { arguments += ["--password", password] }
            if let subscribe { arguments += ["--subscribe", subscribe] }
            if countCopies { arguments.append("--count-copies") }
            if let keepAlive { arguments += ["--keep-alive", "\(keepAlive)"] }
            processes.append(try ChildProcess(executable, arguments))
        }
        let fleet = Fleet(processes: processes, files: files)
        let expected = groups.map(\.clientIDs.count).reduce(0, +)
        do {
            var connected = 0
            for process in processes { connected += Int(try await process.expect("ready ")) ?? 0 }
            guard connected == expected else { throw BenchError("only \(connected) of \(expected) devices connected") }
        } catch {
            fleet.stop()
            throw error
        }
        return fleet
    }

    /// Latencies (ns) received since the last report, and the latest receipt time.
    func report() async throws -> (samples: [Int64], lastReceipt: Int64) {
        let receipts = try await receipts()
        return (receipts.samples, receipts.lastReceipt)
    }

    /// What the devices received since the last report: latencies (ns), the latest receipt
    /// time, and the copies (counted when the fleet was started with `countCopies`).
    func receipts() async throws -> (samples: [Int64], lastReceipt: Int64, copies: CopyTally) {
        var samples: [Int64] = []
        var last: Int64 = 0
        var copies = CopyTally()
        for process in processes { process.send("report") }
        for process in processes {
            let fields = try await process.expect("report ").split(separator: " ")
            guard fields.count == 6, let tally = CopyTally(fields: fields.suffix(3)) else { throw BenchError("bad report") }
            last = max(last, Int64(fields[1]) ?? 0)
            copies.add(tally)
            let text = try String(contentsOfFile: String(fields[2]), encoding: .utf8)
            try? FileManager.default.removeItem(atPath: String(fields[2]))
            samples += text.split(separator: "\n").compactMap { Int64($0) }
        }
        return (samples, last, copies)
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

    /// Per process: connections up, and those closed since (``LoadCommand``'s `status`).
    func status() async throws -> [(connected: Int, closed: Int)] {
        for process in processes { process.send("status") }
        var statuses: [(Int, Int)] = []
        for process in processes {
            let fields = try await process.expect("status ").split(separator: " ").compactMap { Int($0) }
            guard fields.count == 2 else { throw BenchError("bad status") }
            statuses.append((fields[0], fields[1]))
        }
        return statuses
    }

    func stop() {
        for process in processes { process.send("exit") }
        for process in processes { process.terminate() }
        for file in files { try? FileManager.default.removeItem(atPath: file) }
    }
}
