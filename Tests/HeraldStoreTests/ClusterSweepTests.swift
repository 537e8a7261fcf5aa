import Foundation
import HeraldCore
import HeraldTestSupport
import PostgresNIO
import Testing

@testable import HeraldStore

/// Declaring a node dead hands over at once what it held: its route rows, in the same
/// sweep, and its jobs, without waiting for their leases.
@Suite struct ClusterSweepTests {
    /// A center whose node is `node`, as the acceptor sees it.
    private struct Sink: FannedOutPushSink {
        var node: String
        var lease: Duration { .seconds(30) }
        var peerRouting: PeerRouting? { nil }
        func receive(_ pushes: [FannedOutPush]) {}
    }

    @Test func aDeadNodesRoutesAndJobsAreHandedOverInTheSweepThatDeclaresItDead() async throws {
        try await TestDatabase.withStore { store in
            let app = try await store.api.createApp(name: "Sweep")
            let registered = try await store.api.devices.register(appKey: app.app.appKey, DeviceRegistration(platform: .linux))
            let device = try #require(try await store.gateway.device(registrationID: registered.registrationID))
            try await store.sql.query("INSERT INTO nodes (node_id) VALUES ('live'), ('dead')")
            // A push accepted by the node that then dies: its job is leased to it.
            let request = PushRequest(
                audience: .filter(AudienceFilter(registrationID: [device.registrationID])),
                message: InAppMessage(msgContent: "m")
            )
            let pending = PendingPush(
                request,
                push: try request.validated(),
                msgID: try await store.api.newMsgID(),
                appID: device.appID,
                now: Date(),
                fansOutHere: true
            )
            _ = try await store.api.acceptPushes([pending], fanningOutTo: Sink(node: "dead"))
            #expect(try await store.center.claimJobs(node: "live", lease: .seconds(30), limit: 10).isEmpty)
            let messageID = try #require(try await store.sql.query("SELECT message_id FROM push_jobs").decode(Int64.self).first { _ in true })
            try await store.sql.query("INSERT INTO node_routes (node_id, message_id, device_ids) VALUES ('dead', \(messageID), \([device.deviceID]))")
            try await store.sql.query("UPDATE nodes SET heartbeat_at = now() - interval '1 hour' WHERE node_id = 'dead'")

            let (dead, adopted) = try await store.cluster.sweepDeadNodes(deadAfter: .seconds(10), by: "live")
            #expect(dead == ["dead"])
            #expect(adopted == 1)
            let claimed = try await store.center.claimJobs(node: "live", lease: .seconds(30), limit: 10)
            #expect(claimed.map(\.messageID) == [messageID])
        }
    }
}
