import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import PostgresNIO
import Testing

/// The cluster's sessions: which node holds a device, fenced by an epoch.
@Suite struct SessionTests {
    private func devices(_ store: TestStores, count: Int) async throws -> [DeviceIdentity] {
        let app = try await store.api.createApp(name: "Sessions")
        var devices: [DeviceIdentity] = []
        for _ in 0..<count {
            let registered = try await store.api.devices.register(appKey: app.app.appKey, DeviceRegistration(platform: .linux))
            devices.append(try #require(try await store.gateway.device(registrationID: registered.registrationID)))
        }
        return devices
    }

    private func holder(_ store: TestStores, _ device: DeviceIdentity) async throws -> (epoch: Int64, node: String?) {
        let rows = try await store.sql.query("SELECT epoch, node_id FROM device_sessions WHERE device_id = \(device.deviceID)")
        for try await row in rows.decode((Int64, String?).self) { return row }
        Issue.record("no session row")
        return (0, nil)
    }

    @Test func eachClaimBumpsTheEpochAndNamesTheNodeThatHeldTheDevice() async throws {
        try await TestDatabase.withStore { store in
            let devices = try await devices(store, count: 2)
            let first = try await store.gateway.claimSessions(devices, node: "a")
            #expect(first.map(\.epoch) == [1, 1])
            #expect(first.map(\.previousNode) == [nil, nil])
            #expect(first.map(\.earlierMayHaveSent) == [false, false])
            // The same node again: no previous node to tell; its connection still holding
            // the device may have sent what it hasn't recorded yet.
            let again = try await store.gateway.claimSessions([devices[0]], node: "a")
            #expect(again == [SessionClaim(epoch: 2, previousNode: nil, earlierMayHaveSent: true)])
            // Another node takes device 1 over; node a is named, to close its connection.
            let moved = try await store.gateway.claimSessions([devices[1]], node: "b")
            #expect(moved == [SessionClaim(epoch: 2, previousNode: "a", earlierMayHaveSent: true)])
            #expect(try await holder(store, devices[1]) == (2, "b"))
        }
    }

    @Test func aDeviceTwiceInOneBatchGetsTwoEpochsTheLaterNewest() async throws {
        try await TestDatabase.withStore { store in
            let device = try await devices(store, count: 1)[0]
            let claims = try await store.gateway.claimSessions([device, device], node: "a")
            #expect(claims.map(\.epoch) == [1, 2])
            #expect(claims.map(\.earlierMayHaveSent) == [false, true])
            #expect(try await holder(store, device).epoch == 2)
        }
    }

    @Test func aStaleReleaseOrAcknowledgementChangesNothing() async throws {
        try await TestDatabase.withStore { store in
            let device = try await devices(store, count: 1)[0]
            _ = try await store.gateway.enqueue(
                (1...3).map { InboxBroadcast(deviceIDs: [device.deviceID], msgID: "m\($0)", payload: [], expiresAt: .distantFuture) }
            )
            let old = try await store.gateway.claimSessions([device], node: "a")[0].epoch
            let new = try await store.gateway.claimSessions([device], node: "b")[0].epoch
            // Node a's connection closes late, and writes what it had acknowledged.
            try await store.gateway.releaseSessions([SessionEpoch(deviceID: device.deviceID, epoch: old)])
            try await store.gateway.acknowledge([device.deviceID: 3], epochs: [device.deviceID: old])
            #expect(try await holder(store, device) == (new, "b"))
            #expect(try await store.acknowledgedSeq(deviceID: device.deviceID) == 0)
            #expect(
                try await store.gateway.supersededSessions([SessionEpoch(deviceID: device.deviceID, epoch: old)])
                    == [SessionEpoch(deviceID: device.deviceID, epoch: new)]
            )
            #expect(try await store.gateway.supersededSessions([SessionEpoch(deviceID: device.deviceID, epoch: new)]).isEmpty)
            // Node b's own writes count.
            try await store.gateway.acknowledge([device.deviceID: 2], epochs: [device.deviceID: new])
            #expect(try await store.acknowledgedSeq(deviceID: device.deviceID) == 2)
            try await store.gateway.releaseSessions([SessionEpoch(deviceID: device.deviceID, epoch: new)])
            #expect(try await holder(store, device) == (new, nil))
        }
    }

    /// Whether the next connection must set DUP on what an earlier one may have sent
    /// without a record: not after a release (written after the connection's positions),
    /// but after a node died or restarted holding the device, once, until the next claim.
    @Test func aClaimAfterADeadNodeSaysItsPositionsMayBeUnrecordedAndAReleasedOneDoesNot() async throws {
        try await TestDatabase.withStore { store in
            let devices = try await devices(store, count: 3)
            try await store.cluster.register(node: "dying")
            try await store.cluster.register(node: "restarting")
            let released = try await store.gateway.claimSessions([devices[0]], node: "dying")[0].epoch
            try await store.gateway.releaseSessions([SessionEpoch(deviceID: devices[0].deviceID, epoch: released)])
            _ = try await store.gateway.claimSessions([devices[1]], node: "dying")
            _ = try await store.gateway.claimSessions([devices[2]], node: "restarting")
            try await store.sql.query("UPDATE nodes SET heartbeat_at = now() - interval '1 hour' WHERE node_id = 'dying'")
            #expect(try await store.cluster.sweepDeadNodes(deadAfter: .seconds(10), by: "sweeper").dead == ["dying"])
            try await store.cluster.register(node: "restarting")
            #expect(try await holder(store, devices[1]).node == nil)
            #expect(try await holder(store, devices[2]).node == nil)

            let claims = try await store.gateway.claimSessions(devices, node: "b")
            #expect(claims.map(\.earlierMayHaveSent) == [false, true, true])
            #expect(claims.map(\.previousNode) == [nil, nil, nil])
            // Read once: the claim clears the mark, and b's release is a clean one.
            try await store.gateway.releaseSessions(zip(devices, claims).map { SessionEpoch(deviceID: $0.deviceID, epoch: $1.epoch) })
            #expect(try await store.gateway.claimSessions(devices, node: "c").map(\.earlierMayHaveSent) == [false, false, false])
        }
    }
}
