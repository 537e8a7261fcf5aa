import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore
import Logging
import PostgresNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `herald-bench import`: a JPush device export imported through the HTTP endpoint.
struct ImportBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Device import: an NDJSON file of JPush devices (tags, aliases, APNs tokens) through POST …/devices/import.",
        discussion: """
            Starts Herald in this process as `herald serve` composes it (embedded durable PostgreSQL), \
            writes an NDJSON file of --count devices with JPush registration ids (half iOS with an APNs \
            token, half Android; --tags tags each, every two devices sharing an alias), streams it to \
            the import endpoint and prints rows/s; then sends it again (every row unchanged) and prints \
            that rate too. Take /tmp/herald-bench.lock around a run (flock).
            """
    )

    @Option(help: "Devices in the file.") var count = 100_000
    @Option(help: "Tags on each device.") var tags = 3
    @Option(help: "PostgreSQL pool size (herald serve: database.poolSize).") var poolSize = 20

    func validate() throws {
        guard count > 0, (0...Limits.maxTagsPerDevice).contains(tags), poolSize > 1 else { throw ValidationError("counts must be positive") }
    }

    func run() async throws {
        var logger = Logger(label: "herald-bench")
        logger.logLevel = .warning
        let cleanup = Cleanup()
        defer { cleanup.run() }
        let (count, tags) = (self.count, self.tags)
        say("herald-bench import: \(Stats.build) build, \(count) devices, \(tags) tags each")
        let file = URL(fileURLWithPath: NSTemporaryDirectory() + "herald-bench-import-\(getpid()).ndjson")
        cleanup.add("remove \(file.path)") { try? FileManager.default.removeItem(at: file) }
        let bytes = try Self.writeFile(file, count: count, tags: tags)
        say("  file: \(Stats.format(Double(bytes) / 1_048_576)) MiB")
        try await HeraldInProcess.run(.init(poolSize: poolSize), cleanup: cleanup, logger: logger) { herald in
            let app = try await herald.store.createApp(name: "import bench")
            let url = "http://127.0.0.1:\(herald.apiPort)/admin/v1/apps/\(app.app.appKey)/devices/import"
            for round in ["first import", "same file again"] {
                let started = ContinuousClock.now
                let answer = try await Self.upload(file, to: url, adminToken: herald.adminToken)
                let elapsed = started.duration(to: .now)
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                guard answer.rows == count, answer.rejected == 0 else {
                    throw BenchError("\(round): \(answer.rows) rows read, \(answer.rejected) rejected (expected \(count), 0)")
                }
                say(
                    "import: \(round): \(count) rows in \(Stats.format(seconds, 2)) s = \(Stats.format(Double(count) / seconds, 0)) rows/s "
                        + "(created \(answer.created), updated \(answer.updated), unchanged \(answer.unchanged))"
                )
            }
            let rows = try await herald.inspection.query("SELECT count(*)::bigint, (SELECT count(*) FROM device_tags)::bigint FROM devices")
            for try await (devices, tagRows) in rows.decode((Int64, Int64).self) {
                guard devices == count, tagRows == count * tags else {
                    throw BenchError("the database holds \(devices) devices and \(tagRows) tags (expected \(count), \(count * tags))")
                }
                say("  stored: \(devices) devices, \(tagRows) tags")
            }
        }
    }

    /// Writes the file a JPush export would give; returns its size.
    static func writeFile(_ file: URL, count: Int, tags: Int) throws -> Int {
        FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        var chunk = ""
        var size = 0
        for index in 0..<count {
            let ios = index % 2 == 0
            // JPush ids: 19 hex characters, the third 1 for iOS, 0 for Android.
            let counter = String(index, radix: 16)
            let rid = (ios ? "1a1" : "1a0") + String(repeating: "0", count: 16 - counter.count) + counter
            var row = #"{"registration_id":"\#(rid)","platform":"\#(ios ? "ios" : "android")""#
            if ios { row += #","apns_token":"\#(String(repeating: "0", count: 64 - counter.count) + counter)""# }
            row += #","alias":"user\#(index / 2)","tags":["#
            row += (0..<tags).map { #""tag\#((index + $0 * 7) % 1000)-\#($0)""# }.joined(separator: ",")
            row += "]}\n"
            chunk += row
            if chunk.utf8.count > 1 << 20 {
                size += chunk.utf8.count
                handle.write(Data(chunk.utf8))
                chunk = ""
            }
        }
        size += chunk.utf8.count
        handle.write(Data(chunk.utf8))
        return size
    }

    struct Answer: Decodable {
        var rows: Int
        var created: Int
        var updated: Int
        var unchanged: Int
        var rejected: Int
    }

    /// Streams the file to the import endpoint (URLSession reads it as it sends).
    static func upload(_ file: URL, to url: String, adminToken: String) async throws -> Answer {
        guard let endpoint = URL(string: url) else { throw BenchError("bad URL \(url)") }
        var request = URLRequest(url: endpoint, timeoutInterval: 60)
        request.httpMethod = "POST"
        request.setValue("application/x-ndjson", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer \(adminToken)", forHTTPHeaderField: "Authorization")
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 60
        configuration.timeoutIntervalForResource = 3600
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.upload(for: request, fromFile: file)
        guard let status = (response as? HTTPURLResponse)?.statusCode, status == 200 else {
            throw BenchError("import answered \((response as? HTTPURLResponse)?.statusCode ?? 0): \(String(decoding: data, as: UTF8.self))")
        }
        return try JSONDecoder().decode(Answer.self, from: data)
    }
}
