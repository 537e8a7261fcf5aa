import Foundation
import HeraldKit
import HeraldMQTT
import HeraldNodeTesting
import HeraldTestSupport
import NIOCore
import PostgresNIO
import Testing

/// A cluster losing parts: a node killed, a node paused past its liveness timeout, the
/// LISTEN connections cut. Nothing accepted is lost, and a node that lost its devices
/// changes nothing about them.
@Suite(.serialized)
struct ClusterFailureTests {
    /// What one device received: each msg_id, and whether a second copy came without DUP.
    private final class Inbox: @unchecked Sendable {
        var ids: [String] = []
        var duplicatesWithoutDUP: [String] = []

        func take(_ publish: MQTTPacket.Publish) {
            let id = TestMQTTClient.msgID(publish)
            if ids.contains(id) {
                if !publish.dup { duplicatesWithoutDUP.append(id) }
            } else {
                ids.append(id)
            }
        }

        /// Reads from `mqtt` until every id of `expected` came, or `timeout` passed.
        func collect(_ mqtt: TestMQTTClient, until expected: Set<String>, timeout: Duration) async throws {
            let deadline = ContinuousClock.now + timeout
            while !expected.isSubset(of: Set(ids)), ContinuousClock.now < deadline, mqtt.channel.isActive {
                if let publish = try await mqtt.nextPublish(timeout: .milliseconds(200)) { take(publish) }
            }
        }
    }

    @Test func aNodeKilledDuringATagPushLosesNothing() async throws {
        let environment = ["HERALD_CENTER_LEASE": "3", "HERALD_CENTER_BATCH_SIZE": "5"]
        try await TestCluster.with(nodes: 3, environment: environment) { cluster in
            let (a, b, c) = (cluster.nodes[0], cluster.nodes[1], cluster.nodes[2])
            var devices: [(credentials: DeviceCredentials, mqtt: TestMQTTClient, node: ClusterNode)] = []
            for node in [a, b, c] {
                for _ in 0..<6 {
                    let credentials = try await cluster.register(on: a, tags: ["all"])
                    devices.append((credentials, try await cluster.connect(credentials, to: node), node))
                }
            }
            let inboxes = devices.map { _ in Inbox() }
            var sent: [String] = []
            for index in 0..<20 {
                if index == 8 { b.send(SIGKILL) }
                sent.append(
                    try await cluster.push(
                        via: index.isMultiple(of: 2) ? a : c,
                        ["audience": ["tag": ["all"]], "message": ["msg_content": JSON("m\(index)")], "options": ["time_to_live": 3600]]
                    )
                )
            }
            await b.waitForExit()
            // Node b's devices reconnect to node c; everyone gets everything.
            for (index, device) in devices.enumerated() where device.node === b {
                try await inboxes[index].collect(device.mqtt, until: Set(sent), timeout: .milliseconds(100))
                devices[index].mqtt = try await cluster.connect(device.credentials, to: c)
            }
            for (index, device) in devices.enumerated() {
                try await inboxes[index].collect(device.mqtt, until: Set(sent), timeout: .seconds(30))
                #expect(
                    Set(inboxes[index].ids) == Set(sent),
                    "device \(index) on \(device.node.name) missed \(Set(sent).subtracting(inboxes[index].ids).count)"
                )
                #expect(inboxes[index].duplicatesWithoutDUP.isEmpty, "device \(index): second copies without DUP")
            }
            for device in devices { await device.mqtt.close() }
        }
    }

    @Test func aPausedNodeWakingAfterItsDevicesMovedChangesNothingAboutThem() async throws {
        try await TestCluster.with(nodes: 3) { cluster in
            let (a, b, c) = (cluster.nodes[0], cluster.nodes[1], cluster.nodes[2])
            let device = try await cluster.register(on: a)
            let old = try await cluster.connect(device, to: b)
            b.send(SIGSTOP)
            // Past the liveness timeout (3 s), another node declares b dead.
            try await waitUntilGone(b, cluster)
            let new = try await cluster.connect(device, to: c)
            let epoch = try await session(of: device, cluster)
            let first = try await cluster.push(
                via: a,
                ["audience": ["registration_id": [JSON(device.registrationID)]], "message": ["msg_content": "1"]]
            )
            #expect(try await new.messageIDs(1) == [first])
            b.send(SIGCONT)
            // b wakes, finds it was declared dead, closes its connections and joins again.
            #expect(try await old.waitForClose(timeout: .seconds(10)))
            let second = try await cluster.push(
                via: b,
                ["audience": ["registration_id": [JSON(device.registrationID)]], "message": ["msg_content": "2"]]
            )
            #expect(try await new.messageIDs(1) == [second])
            #expect(try await old.nextPublish(timeout: .milliseconds(300)) == nil)
            #expect(try await session(of: device, cluster) == epoch)
            #expect(try await cluster.holder(of: device) == c.name)
            await old.close()
            await new.close()
        }
    }

    @Test func deliveryGoesOnWhenTheListenConnectionsAreKilled() async throws {
        try await TestCluster.with(nodes: 2) { cluster in
            let (a, b) = (cluster.nodes[0], cluster.nodes[1])
            let device = try await cluster.register(on: a)
            let mqtt = try await cluster.connect(device, to: b)
            let killed = try await cluster.sql.query(
                """
                SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()
                """
            )
            var count: Int64 = 0
            for try await n in killed.decode(Int64.self) { count = n }
            #expect(count >= 2)
            let msgID = try await cluster.push(
                via: a,
                ["audience": ["registration_id": [JSON(device.registrationID)]], "message": ["msg_content": "x"]]
            )
            #expect(try await mqtt.messageIDs(1, timeout: .seconds(5)) == [msgID])
            await mqtt.close()
        }
    }

    @Test func theDeviceStatusNamesItsNodeAndWhenItWasLastOnline() async throws {
        try await TestCluster.with(nodes: 2) { cluster in
            let (a, b) = (cluster.nodes[0], cluster.nodes[1])
            let device = try await cluster.register(on: a)
            let never = try await cluster.call(a, "GET", "/v3/devices/\(device.registrationID)")
            #expect(never.json["online"] == false)
            #expect(never.json["node"] == .null)
            #expect(never.json["last_online_at"] == .null)
            let mqtt = try await cluster.connect(device, to: b)
            let online = try await cluster.call(a, "GET", "/v3/devices/\(device.registrationID)")
            #expect(online.json["online"] == true)
            #expect(online.json["node"].string == b.name)
            await mqtt.close()
            let deadline = ContinuousClock.now + .seconds(5)
            var offline = online
            while offline.json["online"] != false, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                offline = try await cluster.call(b, "GET", "/v3/devices/\(device.registrationID)")
            }
            #expect(offline.json["online"] == false)
            #expect(offline.json["node"] == .null)
            #expect(offline.json["last_online_at"].string != nil)
        }
    }

    private func waitUntilGone(_ node: ClusterNode, _ cluster: TestCluster) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let rows = try await cluster.sql.query("SELECT count(*) FROM nodes WHERE node_id = \(node.name)")
            for try await count in rows.decode(Int64.self) where count == 0 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestFailure("\(node.name) was not declared dead")
    }

    private func session(of device: DeviceCredentials, _ cluster: TestCluster) async throws -> Int64 {
        let rows = try await cluster.sql.query(
            "SELECT s.epoch FROM device_sessions s JOIN devices d ON d.id = s.device_id WHERE d.registration_id = \(device.registrationID)"
        )
        for try await epoch in rows.decode(Int64.self) { return epoch }
        return 0
    }
}
