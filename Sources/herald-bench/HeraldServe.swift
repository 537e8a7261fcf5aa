import Foundation
import HeraldStore
import NIOCore
import NIOPosix

/// One `herald serve` process of a benchmark: the build next to this executable (or
/// `binary`), on the benchmark's database, with ports of its own on 127.0.0.1 and the
/// settings every node of a cluster shares; its output goes to a log file.
final class HeraldServe: @unchecked Sendable {
    // Process isn't Sendable; it is set up once here, then only signalled and waited for.
    let name: String
    let httpPort: Int
    let mqttPort: Int
    let log: String
    private let process = Process()

    /// What the nodes of one run share.
    struct Shared: Sendable {
        var binary: String
        var databaseURL: DatabaseURL
        /// Where each node's data directory and log go.
        var directory: String
        var adminToken: String
        var keyEncryptionKey: String
        /// Further `HERALD_` settings (pool sizes).
        var settings: [String: String]
    }

    /// The `herald` executable beside this one.
    static var defaultBinary: String {
        let me =
            CommandLine.arguments[0].hasPrefix("/")
            ? CommandLine.arguments[0] : FileManager.default.currentDirectoryPath + "/" + CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("herald").path
    }

    /// Starts node `name` on `ports` (HTTP, MQTT).
    init(name: String, ports: (http: Int, mqtt: Int), shared: Shared) throws {
        guard FileManager.default.isExecutableFile(atPath: shared.binary) else {
            throw BenchError("no herald executable at \(shared.binary): build it (swift build -c release --product herald) or pass --herald")
        }
        self.name = name
        (httpPort, mqttPort) = ports
        let data = shared.directory + "/" + name
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        log = shared.directory + "/\(name).log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") }
        environment.merge(
            [
                "HERALD_NODE_ID": name,
                "HERALD_DATABASE_URL": shared.databaseURL.urlString,
                "HERALD_DATA_DIR": data,
                "HERALD_ADMIN_TOKEN": shared.adminToken,
                "HERALD_KEY_ENCRYPTION_KEY": shared.keyEncryptionKey,
                "HERALD_HTTP_HOST": "127.0.0.1",
                "HERALD_HTTP_PORT": "\(httpPort)",
                "HERALD_MQTT_HOST": "127.0.0.1",
                "HERALD_MQTT_PORT": "\(mqttPort)",
                "HERALD_APNS_SANDBOX": "off",
                // The benchmark closes its devices' connections before it stops the nodes.
                "HERALD_CLUSTER_DRAIN_DELAY": "0",
                "HERALD_LOG_LEVEL": "warning",
            ]
        ) { $1 }
        environment.merge(shared.settings) { $1 }
        process.executableURL = URL(fileURLWithPath: shared.binary)
        process.arguments = ["serve"]
        process.environment = environment
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = output
        process.standardError = output
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// Waits until the node answers `GET /readyz` with 200 and its gateway accepts
    /// connections (it listens only once the node has joined the cluster).
    func waitUntilReady(adminToken: String, timeout: Duration = .seconds(60)) async throws {
        let deadline = ContinuousClock.now + timeout
        let group = MultiThreadedEventLoopGroup.singleton
        while ContinuousClock.now < deadline {
            guard process.isRunning else { throw BenchError("\(name) exited:\n\(logTail())") }
            if let http = try? await HTTPConnection.connect(host: "127.0.0.1", port: httpPort, group: group) {
                let status = try? await http.get("/readyz", authorization: "Bearer \(adminToken)", timeout: .seconds(2)).status
                await http.close()
                if status == 200, let mqtt = try? await ClientBootstrap(group: group).connect(host: "127.0.0.1", port: mqttPort).get() {
                    try? await mqtt.close()
                    return
                }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw BenchError("\(name) not ready within \(timeout):\n\(logTail())")
    }

    /// SIGTERM (the node drains and leaves the cluster), then SIGKILL after `grace`.
    func stop(grace: Duration = .seconds(20)) {
        guard process.isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + grace
        while process.isRunning, ContinuousClock.now < deadline { usleep(20_000) }
        if process.isRunning {
            say("  \(name) still running \(grace) after SIGTERM; killing it")
            kill(pid, SIGKILL)
        }
        process.waitUntilExit()
    }

    /// SIGKILL at once: for an interrupted run.
    func killImmediately() {
        if process.isRunning { kill(pid, SIGKILL) }
    }

    /// The end of the node's log.
    func logTail(lines: Int = 30) -> String {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }

    /// `count` different TCP ports free now on 127.0.0.1 (held open together while picked).
    static func freePorts(_ count: Int) async throws -> [Int] {
        var channels: [any Channel] = []
        defer { for channel in channels { channel.close(promise: nil) } }
        for _ in 0..<count {
            channels.append(try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get())
        }
        return channels.compactMap { $0.localAddress?.port }
    }
}
