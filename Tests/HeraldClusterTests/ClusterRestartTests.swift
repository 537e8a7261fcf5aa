import Foundation
import HeraldKit
import HeraldMQTT
import HeraldNodeTesting
import HeraldTestSupport
import Logging
import NIOConcurrencyHelpers
import Testing

/// Nodes stopped and started while pushes keep coming: what a rolling upgrade does.
@Suite(.serialized)
struct ClusterRestartTests {
    @Test func aRollingRestartUnderASteadyPushLoadLosesNothing() async throws {
        let environment = ["HERALD_CENTER_LEASE": "3", "HERALD_CLUSTER_DRAIN_RATE": "20"]
        try await TestCluster.with(nodes: 3, environment: environment) { cluster in
            let live = NIOLockedValueBox(cluster.nodes)
            let accepted = NIOLockedValueBox<[String]>([])
            let received = NIOLockedValueBox<[Int: Set<String>]>([:])
            let stop = NIOLockedValueBox(false)
            var clients: [HeraldClient] = []
            var devices: [DeviceCredentials] = []
            for node in cluster.nodes {
                for _ in 0..<2 {
                    let credentials = try await cluster.register(on: node)
                    devices.append(credentials)
                    let configuration = HeraldClient.Configuration(
                        host: "127.0.0.1",
                        port: node.mqttPort,
                        appKey: cluster.appKey,
                        keepAlive: 5,
                        backoff: Backoff(base: .milliseconds(100), cap: .milliseconds(500))
                    )
                    clients.append(HeraldClient(configuration: configuration, credentials: credentials, logger: Logger(label: "device")))
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, client) in clients.enumerated() {
                    group.addTask { await client.run() }
                    group.addTask {
                        for await event in client.events {
                            if case .message(let message) = event {
                                received.withLockedValue { _ = $0[index, default: []].insert(message.messageID) }
                            }
                        }
                    }
                }
                // Every device connected before the load starts.
                for (index, device) in devices.enumerated() {
                    try await cluster.waitUntilHeld(device, by: cluster.nodes[index / 2], timeout: .seconds(20))
                }
                group.addTask {
                    var turn = 0
                    while !stop.withLockedValue({ $0 }) {
                        let nodes = live.withLockedValue { $0 }
                        let node = nodes[turn % nodes.count]
                        turn += 1
                        if let msgID = try? await cluster.push(
                            via: node,
                            ["audience": "all", "message": ["msg_content": "load"], "options": ["time_to_live": 3600]]
                        ) {
                            accepted.withLockedValue { $0.append(msgID) }
                        }
                        try? await Task.sleep(for: .milliseconds(50))
                    }
                }
                var restarted: [ClusterNode] = []
                for index in cluster.nodes.indices {
                    let old = cluster.nodes[index]
                    live.withLockedValue { $0.removeAll { $0 === old } }
                    old.send(SIGTERM)
                    await old.waitForExit(timeout: .seconds(30))
                    let new = try await cluster.start(name: "\(old.name)-restarted", environment: environment, ports: [old.httpPort, old.mqttPort])
                    restarted.append(new)
                    live.withLockedValue { $0.append(new) }
                    try await Task.sleep(for: .seconds(1))
                }
                stop.withLockedValue { $0 = true }
                try await Task.sleep(for: .milliseconds(100))
                let expected = Set(accepted.withLockedValue { $0 })
                let deadline = ContinuousClock.now + .seconds(60)
                while ContinuousClock.now < deadline {
                    let complete = received.withLockedValue { received in clients.indices.allSatisfy { expected.isSubset(of: received[$0] ?? []) } }
                    if complete { break }
                    try await Task.sleep(for: .milliseconds(200))
                }
                #expect(expected.count >= 30, "only \(expected.count) pushes accepted during the restarts")
                for index in clients.indices {
                    let missing = expected.subtracting(received.withLockedValue { $0[index] ?? [] })
                    #expect(missing.isEmpty, "device \(index) missed \(missing.count) of \(expected.count)")
                }
                for node in restarted { node.send(SIGTERM) }
                for node in restarted { await node.waitForExit() }
                group.cancelAll()
            }
        }
    }
}

/// A node told to stop (SIGTERM): readiness first, then its devices at the drain rate.
@Suite(.serialized)
struct ClusterDrainTests {
    @Test func aNodeToldToStopFailsReadinessFirstAndLetsItsDevicesGoAtTheDrainRate() async throws {
        let environment = ["HERALD_CLUSTER_DRAIN_DELAY": "2", "HERALD_CLUSTER_DRAIN_RATE": "10"]
        try await TestCluster.with(nodes: 2, environment: environment) { cluster in
            let (a, b) = (cluster.nodes[0], cluster.nodes[1])
            var connections: [(DeviceCredentials, TestMQTTClient)] = []
            for _ in 0..<20 {
                let device = try await cluster.register(on: a)
                connections.append((device, try await cluster.connect(device, to: b)))
            }
            b.send(SIGTERM)
            // Not ready at once, while it still serves (and holds every device).
            var status = 0
            let deadline = ContinuousClock.now + .seconds(1)
            while status != 503, ContinuousClock.now < deadline {
                status = (try? await TestCluster.call(b, "GET", "/readyz", nil, authorization: "").status) ?? 0
            }
            #expect(status == 503)
            #expect(connections.allSatisfy { $0.1.channel.isActive })
            // Then its devices are let go a few at a time, not all at once.
            var closedAt: [ContinuousClock.Instant] = []
            var open = connections.map(\.1)
            let end = ContinuousClock.now + .seconds(20)
            while !open.isEmpty, ContinuousClock.now < end {
                let closed = open.filter { !$0.channel.isActive }
                closedAt += closed.map { _ in ContinuousClock.now }
                open.removeAll { !$0.channel.isActive }
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(open.isEmpty)
            if let first = closedAt.first, let last = closedAt.last {
                #expect(last - first >= .seconds(1), "20 connections at 10 a second closed within \(last - first)")
            }
            await b.waitForExit()
            // It left the cluster: its devices are offline, its row gone.
            for (device, _) in connections { #expect(try await cluster.holder(of: device) == nil) }
            let rows = try await cluster.sql.query("SELECT count(*) FROM nodes WHERE node_id = \(b.name)")
            for try await count in rows.decode(Int64.self) { #expect(count == 0) }
        }
    }
}
