import Foundation
import HeraldKit
import HeraldNodeTesting
import HeraldTestSupport
import PostgresNIO
import Testing

/// Memory per idle connection, counted: the heap a `herald serve` process holds for each
/// idle device connection, as its allocator counts it (`herald_process_heap_bytes`), must
/// stay within a stated budget (issue #33). A count of bytes, not a timing: it is the same
/// on a loaded machine.
@Suite struct GatewayMemoryTests {
    /// The heap one idle connection may hold in a debug build: the gateway's handler and
    /// session state, its entries in the node's tables (registry, sweeper, session book,
    /// authentication cache), and NIO's channel and pipeline under it. `herald-bench
    /// gateway` measures a release build's resident memory the same way.
    static let budget = 4_800

    /// Connections measured, after a warm-up: enough that the tables' growth by doubling
    /// averages out.
    static let measured = 1_000
    static let warmUp = 60

    @Test func anIdleConnectionHoldsNoMoreHeapThanItsBudget() async throws {
        try await TestCluster.with(nodes: 1) { cluster in
            let node = cluster.nodes[0]
            var devices: [DeviceCredentials] = []
            for _ in 0..<(Self.warmUp + Self.measured) { devices.append(try await cluster.register(on: node)) }
            var clients: [TestMQTTClient] = []
            clients += try await connect(devices.prefix(Self.warmUp), to: node, cluster: cluster)
            try await waitUntilHeld(Self.warmUp, node: node, cluster: cluster)
            let before = try await settledHeap(of: node)
            clients += try await connect(devices.dropFirst(Self.warmUp), to: node, cluster: cluster)
            try await waitUntilHeld(Self.warmUp + Self.measured, node: node, cluster: cluster)
            // Settled: the claims and the acknowledgement positions are written.
            try await Task.sleep(for: .seconds(1))
            let after = try await settledHeap(of: node)
            let perConnection = (after - before) / Self.measured
            print("GatewayMemoryTests: \(perConnection) bytes of heap per idle connection (\(Self.measured) connections, budget \(Self.budget))")
            #expect(perConnection > 0, "the heap didn't grow: the count isn't read")
            #expect(perConnection <= Self.budget, "\(perConnection) bytes of heap per idle connection, over the budget of \(Self.budget)")
            for client in clients { await client.close() }
        }
    }

    /// Connects `devices` to `node`, 16 at a time.
    private func connect(_ devices: some Collection<DeviceCredentials>, to node: ClusterNode, cluster: TestCluster) async throws -> [TestMQTTClient] {
        var clients: [TestMQTTClient] = []
        var pending = Array(devices)[...]
        while !pending.isEmpty {
            let batch = pending.prefix(16)
            pending = pending.dropFirst(16)
            clients += try await withThrowingTaskGroup(of: TestMQTTClient.self) { group in
                for device in batch {
                    group.addTask {
                        let (client, code) = try await TestMQTTClient.connect(
                            to: node.mqttAddress,
                            clientID: device.registrationID,
                            username: cluster.appKey,
                            password: device.deviceSecret
                        )
                        guard code == .accepted else { throw TestFailure("CONNECT refused: \(String(describing: code))") }
                        return client
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        return clients
    }

    /// Waits until `count` devices' sessions are held by `node`.
    private func waitUntilHeld(_ count: Int, node: ClusterNode, cluster: TestCluster) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let rows = try await cluster.sql.query("SELECT count(*)::int FROM device_sessions WHERE node_id = \(node.name)")
            for try await held in rows.decode(Int.self) where held >= count { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestFailure("fewer than \(count) sessions held by \(node.name)")
    }

    /// The least of five readings of the node's heap, 200 ms apart: what the connections
    /// hold, not what a statement or a batch in flight holds for a moment.
    private func settledHeap(of node: ClusterNode) async throws -> Int {
        var least = Int.max
        for _ in 0..<5 {
            least = min(least, try await heap(of: node))
            try await Task.sleep(for: .milliseconds(200))
        }
        return least
    }

    /// The node's heap in use, from its metrics.
    private func heap(of node: ClusterNode) async throws -> Int {
        let answer = try await TestHTTP.exchange("GET", node.apiURL.absoluteString + "/metrics", headers: [:], body: nil)
        let text = String(decoding: answer.body, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("herald_process_heap_bytes ") {
            if let value = Double(line.split(separator: " ").last ?? "") { return Int(value) }
        }
        throw TestFailure("no herald_process_heap_bytes in the node's metrics")
    }
}
