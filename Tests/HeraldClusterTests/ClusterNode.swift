import Foundation
import HeraldNodeTesting
import HeraldTestSupport
import NIOCore
import NIOPosix

/// One `herald serve` process of a test cluster: the built binary, on the cluster's
/// database, with ports of its own on 127.0.0.1; its output goes to a log file the test
/// prints when it fails.
final class ClusterNode: @unchecked Sendable {
    let name: String
    let httpPort: Int
    let mqttPort: Int
    let log: URL
    private let process = Process()
    /// Its exit, read with waitpid (Foundation's can be missed: ``ChildExit``).
    private let exit: ChildExit

    var apiURL: URL { URL(string: "http://127.0.0.1:\(httpPort)")! }
    var mqttAddress: SocketAddress { try! SocketAddress(ipAddress: "127.0.0.1", port: mqttPort) }
    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { exit.isRunning }

    /// Starts `herald serve` named `name` (its node id) with `environment` added to the
    /// cluster's settings, on `ports` (HTTP, MQTT) or free ones.
    init(name: String, databaseURL: String, directory: URL, environment extra: [String: String], ports: [Int]? = nil) throws {
        guard let binary = HeraldBinary.url else { throw TestFailure("herald binary not found; build it first or set HERALD_BINARY") }
        self.name = name
        exit = ChildExit(process)
        let ports = try ports ?? Self.freePorts(2)
        (httpPort, mqttPort) = (ports[0], ports[1])
        let data = directory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        log = directory.appendingPathComponent("\(name).log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") }
        environment.merge(
            [
                "HERALD_NODE_ID": name,
                "HERALD_DATABASE_URL": databaseURL,
                "HERALD_DATA_DIR": data.path,
                "HERALD_ADMIN_TOKEN": TestCluster.adminToken,
                "HERALD_KEY_ENCRYPTION_KEY": TestCluster.keyEncryptionKey,
                "HERALD_HTTP_HOST": "127.0.0.1",
                "HERALD_HTTP_PORT": "\(httpPort)",
                "HERALD_MQTT_HOST": "127.0.0.1",
                "HERALD_MQTT_PORT": "\(mqttPort)",
                "HERALD_APNS_SANDBOX": "off",
                "HERALD_DATABASE_POOL_SIZE": "4",
                "HERALD_DATABASE_DELIVERY_POOL_SIZE": "6",
                "HERALD_CLUSTER_HEARTBEAT_INTERVAL": "1",
                "HERALD_CLUSTER_DEAD_AFTER": "3",
                "HERALD_CLUSTER_DRAIN_DELAY": "0",
                "HERALD_CENTER_ACK_TIMEOUT": "3",
                "HERALD_LOG_LEVEL": "info",
            ]
        ) { $1 }
        environment.merge(extra) { $1 }
        process.executableURL = binary
        process.arguments = ["serve"]
        process.environment = environment
        let output = try FileHandle(forWritingTo: log)
        process.standardOutput = output
        process.standardError = output
        try process.run()
    }

    /// Starts a node and waits until it is ready. Free ports are picked, released, then
    /// bound by the node: another process may take one in between (the node exits with
    /// EADDRINUSE), and then the node is started again on others.
    static func started(
        name: String,
        databaseURL: String,
        directory: URL,
        environment: [String: String],
        ports: [Int]? = nil
    ) async throws -> ClusterNode {
        var attempt = 1
        while true {
            let node = try ClusterNode(name: name, databaseURL: databaseURL, directory: directory, environment: environment, ports: ports)
            do {
                try await node.waitUntilReady()
                return node
            } catch  where ports == nil && attempt < 3 && !node.isRunning && node.output().contains("Address already in use") {
                attempt += 1
            }
        }
    }

    /// Waits until the node answers `/readyz` and its gateway accepts connections.
    func waitUntilReady(timeout: Duration = .seconds(60)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard isRunning else { throw TestFailure("\(name) exited: \(output())") }
            if (try? await status("/readyz")) == 200, await acceptsMQTT() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestFailure("\(name) not ready within \(timeout): \(output())")
    }

    /// The status `path` answers with, within two seconds: one probe that hangs (a
    /// connection accepted before the server reads it) must not use up the whole wait.
    private func status(_ path: String) async throws -> Int {
        try await TestHTTP.exchange("GET", apiURL.appendingPathComponent(path).absoluteString, timeout: .seconds(2)).status
    }

    private func acceptsMQTT() async -> Bool {
        guard let channel = try? await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(to: mqttAddress).get() else {
            return false
        }
        try? await channel.close()
        return true
    }

    /// Sends `signal` (SIGTERM, SIGKILL, SIGSTOP, SIGCONT).
    func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for the process to exit; kills it after `timeout`.
    func waitForExit(timeout: Duration = .seconds(30)) async {
        let deadline = ContinuousClock.now + timeout
        while isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        if isRunning {
            send(SIGKILL)
            _ = await exit.wait()
        }
    }

    /// The node's log so far.
    func output() -> String {
        (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    }

    /// The log with a line that repeats the one before it (but for its time) left out: what
    /// a failed test prints, so a message logged every second doesn't hide what came before.
    var distinctOutput: String {
        var last = ""
        var kept: [Substring] = []
        for line in output().split(separator: "\n") {
            let message = line.split(separator: " ", maxSplits: 1).last ?? line
            if message != last { kept.append(line) }
            last = String(message)
        }
        return kept.joined(separator: "\n")
    }

    /// `count` different ports free now (held open together while they are picked).
    private static func freePorts(_ count: Int) throws -> [Int] {
        let channels = try (0..<count).map { _ in
            try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
        }
        defer { for channel in channels { try? channel.close().wait() } }
        return channels.map { $0.localAddress!.port! }
    }
}
