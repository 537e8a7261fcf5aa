import Foundation
import HeraldKit
import HeraldMQTT
import HeraldNodeTesting
import HeraldStore
import HeraldTestSupport
import NIOCore
import PostgresNIO

/// Several `herald serve` processes on one fresh database, an app made through the first
/// node's admin API, and what a test does with them: call any node's API, register
/// devices, connect them (raw MQTT) to any node, look at the tables.
struct TestCluster: Sendable {
    static let adminToken = "cluster-admin-token-0123456789abcdef"
    /// The same on every node: each must open the credentials any other stored.
    static let keyEncryptionKey = Data(repeating: 7, count: 32).base64EncodedString()

    let nodes: [ClusterNode]
    /// Each node's link to the database, when the cluster was started with `linksToPause`
    /// (node `i` on `links[i]`); empty otherwise.
    let links: [PausableTCPProxy]
    let sql: PostgresClient
    let databaseURL: DatabaseURL
    let directory: URL
    let appKey: String
    let masterSecret: String

    /// Runs `body` with `count` nodes, all ready; stops them afterwards (and prints their
    /// logs when `body` throws). With `linksToPause`, each node reaches the database through
    /// a proxy of its own (``links``), which the test may pause: a cut network link.
    static func with(
        nodes count: Int,
        environment: [String: String] = [:],
        linksToPause: Bool = false,
        _ body: @Sendable (TestCluster) async throws -> Void
    ) async throws {
        try await TestDatabase.withDatabase { url in
            var proxies: [PausableTCPProxy] = []
            if linksToPause {
                for _ in 0..<count { proxies.append(try await PausableTCPProxy.start(to: url.host, port: url.port)) }
            }
            let links = proxies
            do {
                try await run(nodes: count, environment: environment, links: links, url: url, body)
            } catch {
                for link in links { await link.stop() }
                throw error
            }
            for link in links { await link.stop() }
        }
    }

    private static func run(
        nodes count: Int,
        environment: [String: String],
        links: [PausableTCPProxy],
        url: DatabaseURL,
        _ body: @Sendable (TestCluster) async throws -> Void
    ) async throws {
        try await TestDatabase.withClient(url) { sql in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cluster-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var nodes: [ClusterNode] = []
            defer { try? FileManager.default.removeItem(at: directory) }
            do {
                for index in 1...count {
                    nodes.append(
                        try await ClusterNode.started(
                            name: "node-\(index)",
                            databaseURL: links.isEmpty ? url.urlString : url.through(links[index - 1]).urlString,
                            directory: directory,
                            environment: environment
                        )
                    )
                }
                let created = try await call(nodes[0], "POST", "/admin/v1/apps", ["name": "Cluster"], authorization: "Bearer \(adminToken)")
                guard created.status == 201, let key = created.json["app_key"].string, let secret = created.json["master_secret"].string else {
                    throw TestFailure("cannot create the app: \(created.status) \(created.json)")
                }
                let cluster = TestCluster(
                    nodes: nodes,
                    links: links,
                    sql: sql,
                    databaseURL: url,
                    directory: directory,
                    appKey: key,
                    masterSecret: secret
                )
                try await body(cluster)
            } catch {
                for node in nodes { print("----- \(node.name)\n\(node.output().suffix(6000))") }
                for node in nodes where node.isRunning { node.send(SIGKILL) }
                for node in nodes { await node.waitForExit() }
                throw error
            }
            for node in nodes where node.isRunning { node.send(SIGTERM) }
            for node in nodes { await node.waitForExit() }
        }
    }

    /// Starts another node (a restart: a new process, a new node id), on `ports` (HTTP,
    /// MQTT) or free ones. The caller stops it.
    func start(name: String, environment: [String: String] = [:], ports: [Int]? = nil) async throws -> ClusterNode {
        try await ClusterNode.started(name: name, databaseURL: databaseURL.urlString, directory: directory, environment: environment, ports: ports)
    }

    /// An API call to `node`, as the test's app.
    func call(_ node: ClusterNode, _ method: String, _ path: String, _ body: JSON? = nil) async throws -> (status: Int, json: JSON) {
        try await Self.call(node, method, path, body, authorization: "Basic " + Data("\(appKey):\(masterSecret)".utf8).base64EncodedString())
    }

    static func call(
        _ node: ClusterNode,
        _ method: String,
        _ path: String,
        _ body: JSON?,
        authorization: String
    ) async throws -> (status: Int, json: JSON) {
        let answer = try await exchange(node, method, path, body, authorization: authorization)
        return (answer.status, answer.json)
    }

    /// An API call to `node`, as the test's app, with the answer's headers.
    func exchange(_ node: ClusterNode, _ method: String, _ path: String, _ body: JSON? = nil) async throws -> Answer {
        try await Self.exchange(node, method, path, body, authorization: "Basic " + Data("\(appKey):\(masterSecret)".utf8).base64EncodedString())
    }

    struct Answer: Sendable {
        var status: Int
        var json: JSON
        var headers: [String: String]
    }

    static func exchange(_ node: ClusterNode, _ method: String, _ path: String, _ body: JSON?, authorization: String) async throws -> Answer {
        var headers = ["Authorization": authorization]
        var data: Data?
        if let body {
            headers["Content-Type"] = "application/json"
            data = try JSONEncoder().encode(body)
        }
        let answer = try await TestHTTP.exchange(method, node.apiURL.absoluteString + path, headers: headers, body: data)
        return Answer(status: answer.status, json: (try? JSONDecoder().decode(JSON.self, from: answer.body)) ?? .null, headers: answer.headers)
    }

    /// Pushes through `node`'s API; returns the msg_id.
    func push(via node: ClusterNode, _ body: JSON) async throws -> String {
        let answer = try await call(node, "POST", "/v3/push", body)
        guard answer.status == 200, let msgID = answer.json["msg_id"].string else { throw TestFailure("push refused: \(answer)") }
        return msgID
    }

    /// Registers a Linux device (no APNs) of the test's app through `node`'s API.
    func register(on node: ClusterNode, alias: String? = nil, tags: [String] = []) async throws -> DeviceCredentials {
        let http = HeraldAPIClient(baseURL: node.apiURL, appKey: appKey)
        let credentials = try await http.register(platform: "linux")
        if let alias { try await http.setAlias(alias, credentials: credentials) }
        if !tags.isEmpty { try await http.updateTags(add: tags, credentials: credentials) }
        return credentials
    }

    /// Connects `device` to `node` with a raw MQTT connection, once its session is claimed
    /// (the connection has loaded its inbox and is reachable from every node).
    func connect(_ device: DeviceCredentials, to node: ClusterNode) async throws -> TestMQTTClient {
        let (mqtt, code) = try await TestMQTTClient.connect(
            to: node.mqttAddress,
            clientID: device.registrationID,
            username: appKey,
            password: device.deviceSecret
        )
        guard code == .accepted else { throw TestFailure("CONNECT to \(node.name) refused with \(code.map { "\($0)" } ?? "no answer")") }
        try await waitUntilHeld(device, by: node)
        return mqtt
    }

    /// Waits until the device's session names `node`.
    func waitUntilHeld(_ device: DeviceCredentials, by node: ClusterNode, timeout: Duration = .seconds(10)) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await holder(of: device) != node.name {
            guard ContinuousClock.now < deadline else { throw TestFailure("\(device.registrationID) not held by \(node.name)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The node the device's session names (nil: offline).
    func holder(of device: DeviceCredentials) async throws -> String? {
        let rows = try await sql.query(
            """
            SELECT s.node_id FROM device_sessions s JOIN devices d ON d.id = s.device_id
            WHERE d.registration_id = \(device.registrationID)
            """
        )
        for try await node in rows.decode(String?.self) { return node }
        return nil
    }
}

extension TestMQTTClient {
    /// The msg_ids of the next `count` PUBLISHes (acknowledged), in order; fewer if they
    /// don't come within `timeout` each.
    func messageIDs(_ count: Int, timeout: Duration = .seconds(10)) async throws -> [String] {
        var ids: [String] = []
        while ids.count < count, let publish = try await nextPublish(timeout: timeout) {
            ids.append(Self.msgID(publish))
        }
        return ids
    }

    static func msgID(_ publish: MQTTPacket.Publish) -> String {
        let object = try? JSONSerialization.jsonObject(with: Data(buffer: publish.payload)) as? [String: Any]
        return object?["msg_id"] as? String ?? ""
    }
}
