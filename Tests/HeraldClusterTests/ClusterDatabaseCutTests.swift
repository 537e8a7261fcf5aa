import Foundation
import HeraldKit
import HeraldMQTT
import HeraldNodeTesting
import HeraldTestSupport
import NIOCore
import Testing

/// A node whose link to the database is cut, while its peers' is not, lets its devices go
/// to them; when the whole database is out of reach, every node keeps its devices. Each
/// node reaches PostgreSQL through a proxy the test pauses (a cut link: no error, no
/// answer). Liveness here: a heartbeat a second, dead after 3 s.
@Suite(.serialized)
struct ClusterDatabaseCutTests {
    @Test func aNodeCutOffFromTheDatabaseLetsItsDevicesGoToALiveNode() async throws {
        try await TestCluster.with(nodes: 2, linksToPause: true) { cluster in
            let (a, b) = (cluster.nodes[0], cluster.nodes[1])
            let device = try await cluster.register(on: a)
            let held = try await cluster.connect(device, to: b)
            // The nodes learn where each other's API is from their heartbeats.
            try await waitUntilAdvertised([a, b], cluster)
            cluster.links[1].pause()
            let cut = ContinuousClock.now
            // Dead after 3 s, a heartbeat interval, the peers' answer (at most 3 s) and b's own
            // connection (at most 6 s): b closes its connections within about 13 s.
            #expect(try await held.waitForClose(timeout: .seconds(20)), "b kept its device while cut off from the database")
            let closedAfter = ContinuousClock.now - cut
            #expect(closedAfter >= .seconds(3), "b let its devices go before a peer could declare it dead: \(closedAfter)")
            // b refuses devices at once while cut off; they go to a, and get what is pushed.
            let (refused, code) = try await TestMQTTClient.connect(
                to: b.mqttAddress,
                clientID: device.registrationID,
                username: cluster.appKey,
                password: device.deviceSecret
            )
            #expect(code == .serverUnavailable)
            await refused.close()
            let moved = try await cluster.connect(device, to: a)
            let msgID = try await cluster.push(
                via: a,
                ["audience": ["registration_id": [JSON(device.registrationID)]], "message": ["msg_content": "while b is cut off"]]
            )
            #expect(try await moved.messageIDs(1, timeout: .seconds(30)) == [msgID])
            #expect(b.output().contains("cut off from the database"))
            // The link comes back: b takes devices again.
            cluster.links[1].resume()
            let other = try await cluster.register(on: a)
            let deadline = ContinuousClock.now + .seconds(20)
            var back: TestMQTTClient?
            while back == nil, ContinuousClock.now < deadline {
                back = try? await cluster.connect(other, to: b)
                if back == nil { try await Task.sleep(for: .milliseconds(250)) }
            }
            #expect(back != nil, "b never took devices again after the link came back")
            await back?.close()
            await moved.close()
        }
    }

    /// Through an outage of the whole database every node keeps its devices, and once the
    /// database is back each node's devices get what is sent (a node's work on copies routed
    /// to it gives up a read the outage cut off: `NodeRouteWorker`).
    @Test
    func everyNodeKeepsItsDevicesWhenTheWholeDatabaseIsOutOfReach() async throws {
        try await TestCluster.with(nodes: 2, linksToPause: true) { cluster in
            let (a, b) = (cluster.nodes[0], cluster.nodes[1])
            let first = try await cluster.register(on: a)
            let second = try await cluster.register(on: a)
            let onA = try await cluster.connect(first, to: a)
            let onB = try await cluster.connect(second, to: b)
            try await waitUntilAdvertised([a, b], cluster)
            for link in cluster.links { link.pause() }
            // Longer than a peer waits (3 s) plus the asking: each node asked the other,
            // which doesn't reach the database either.
            try await Task.sleep(for: .seconds(9))
            for link in cluster.links { link.resume() }
            // After the outage, no node declares the other dead before it could heartbeat.
            try await Task.sleep(for: .seconds(5))
            #expect(onA.channel.isActive && onB.channel.isActive, "a connection was closed by an outage of the whole database")
            #expect(!a.output().contains("closing every device connection"))
            #expect(!b.output().contains("closing every device connection"))
            let msgID = try await cluster.push(via: a, ["audience": "all", "message": ["msg_content": "after the outage"]])
            // Once the pools are back (on a loaded machine that takes a while): not lost.
            let gotA = try await onA.messageIDs(1, timeout: .seconds(60))
            let gotB = try await onB.messageIDs(1, timeout: .seconds(60))
            #expect(
                gotA == [msgID] && gotB == [msgID],
                "a: \(gotA), b: \(gotB)\n--- a\n\(a.distinctOutput.suffix(6000))\n--- b\n\(b.distinctOutput.suffix(6000))"
            )
            await onA.close()
            await onB.close()
        }
    }

    /// Waits until the rows of `nodes` name their HTTP APIs, and then for a heartbeat, by
    /// which every node has read its peers' addresses.
    private func waitUntilAdvertised(_ nodes: [ClusterNode], _ cluster: TestCluster) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        for node in nodes {
            while true {
                let rows = try await cluster.sql.query("SELECT http_address FROM nodes WHERE node_id = \(node.name)")
                var advertised = false
                for try await address in rows.decode(String?.self) { advertised = address == "127.0.0.1:\(node.httpPort)" }
                if advertised { break }
                guard ContinuousClock.now < deadline else { throw TestFailure("\(node.name) never advertised its HTTP address") }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        try await Task.sleep(for: .seconds(2))
    }
}
