import Foundation
import HeraldCore
import HeraldTestSupport
import PostgresNIO
import Testing

@testable import HeraldStore

/// A push fanned out at acceptance, in a cluster: the accepting statement routes the copies
/// whose devices another live node holds to that node, and wakes it once the commit is in.
@Suite struct PeerRoutingTests {
    /// The center of node "a", as the acceptor sees it.
    private struct Sink: FannedOutPushSink {
        var node: String { "a" }
        var lease: Duration { .seconds(30) }
        var peerRouting: PeerRouting?
        func receive(_ pushes: [FannedOutPush]) {}
    }

    private func setUp(_ store: TestStores, devices count: Int) async throws -> (appID: Int64, devices: [DeviceIdentity]) {
        let app = try await store.api.createApp(name: "Peers")
        var devices: [DeviceIdentity] = []
        for _ in 0..<count {
            let registered = try await store.api.devices.register(appKey: app.app.appKey, DeviceRegistration(platform: .linux))
            devices.append(try #require(try await store.gateway.device(registrationID: registered.registrationID)))
        }
        try await store.sql.query("INSERT INTO nodes (node_id) VALUES ('a'), ('b'), ('dead')")
        try await store.sql.query("UPDATE nodes SET heartbeat_at = now() - interval '1 hour' WHERE node_id = 'dead'")
        return (devices[0].appID, devices)
    }

    private func pending(_ store: TestStores, to devices: [DeviceIdentity], appID: Int64, notification: Bool) async throws -> PendingPush {
        let request = PushRequest(
            audience: .filter(AudienceFilter(registrationID: devices.map(\.registrationID))),
            notification: notification ? PushNotification(alert: "Hi") : nil,
            message: notification ? nil : InAppMessage(msgContent: "Hi")
        )
        return PendingPush(
            request,
            push: try request.validated(),
            msgID: try await store.api.newMsgID(),
            appID: appID,
            now: Date(),
            fansOutHere: true
        )
    }

    private func routeRows(_ store: TestStores) async throws -> [String: [Int64]] {
        var rows: [String: [Int64]] = [:]
        let query = try await store.sql.query("SELECT node_id, device_ids FROM node_routes WHERE hops = 1")
        for try await (node, devices) in query.decode((String, [Int64]).self) { rows[node, default: []] += devices }
        return rows
    }

    @Test func copiesForDevicesAnotherLiveNodeHoldsAreRoutedThereAndThatNodeIsWoken() async throws {
        try await TestDatabase.withStore { store in
            let (appID, devices) = try await setUp(store, devices: 4)
            // 0 on b; 1 here; 2 on a dead node; 3 offline.
            _ = try await store.gateway.claimSessions([devices[0]], node: "b")
            _ = try await store.gateway.claimSessions([devices[1]], node: "a")
            _ = try await store.gateway.claimSessions([devices[2]], node: "dead")
            let channel = ClusterChannel.node("b")
            let woken: String? = try await store.sql.withConnection { connection in
                let notices = try await connection.listen(channel)
                let accepted = try await store.api.acceptPushes(
                    [try await pending(store, to: devices, appID: appID, notification: false)],
                    fanningOutTo: Sink(peerRouting: PeerRouting(deadAfter: .seconds(10)))
                )
                #expect(accepted.routedTo == ["b"])
                let push = try #require(accepted.fannedOut.first)
                #expect(push.routedToPeers == 1)
                #expect(Set(push.targets.map(\.deviceID)) == Set(devices[1...].map(\.deviceID)))
                for try await notice in notices { return notice.payload }
                return nil
            }
            #expect(woken == "r")
            #expect(try await routeRows(store) == ["b": [devices[0].deviceID]])
        }
    }

    @Test func withoutPeersOrForABackgroundDevicesNotificationNothingIsRouted() async throws {
        try await TestDatabase.withStore { store in
            let (appID, devices) = try await setUp(store, devices: 2)
            _ = try await store.gateway.claimSessions(devices, node: "b")
            try await store.sql.query("UPDATE devices SET in_background = true WHERE id = \(devices[1].deviceID)")

            let alone = try await store.api.acceptPushes(
                [try await pending(store, to: devices, appID: appID, notification: true)],
                fanningOutTo: Sink(peerRouting: nil)
            )
            #expect(alone.routedTo.isEmpty)
            #expect(alone.fannedOut.first?.targets.count == 2)
            #expect(try await routeRows(store).isEmpty)

            // The notification for the device in the background goes to APNs from here.
            let clustered = try await store.api.acceptPushes(
                [try await pending(store, to: devices, appID: appID, notification: true)],
                fanningOutTo: Sink(peerRouting: PeerRouting(deadAfter: .seconds(10)))
            )
            #expect(clustered.fannedOut.first?.targets.map(\.deviceID) == [devices[1].deviceID])
            #expect(try await routeRows(store) == ["b": [devices[0].deviceID]])
        }
    }

    /// The holder reads its rows oldest first, each with its message and the copies still
    /// pending (a copy recalled since is left out), past the rows it is routing already
    /// and no more than asked (`herald_node_routes`, migration 0024).
    @Test func theHolderReadsItsRowsOldestFirstWithTheirPendingCopiesAndTheirMessage() async throws {
        try await TestDatabase.withStore { store in
            let (appID, devices) = try await setUp(store, devices: 3)
            _ = try await store.gateway.claimSessions(devices, node: "b")
            var msgIDs: [String] = []
            for _ in 0..<2 {
                let accepted = try await store.api.acceptPushes(
                    [try await pending(store, to: devices, appID: appID, notification: false)],
                    fanningOutTo: Sink(peerRouting: PeerRouting(deadAfter: .seconds(10)))
                )
                msgIDs.append(try #require(accepted.fannedOut.first).message.msgID)
            }
            try await store.sql.query(
                """
                UPDATE deliveries SET state = 'recalled' FROM messages m
                WHERE m.id = deliveries.message_id AND m.msg_id = \(msgIDs[0]) AND deliveries.device_id = \(devices[1].deviceID)
                """
            )

            let routes = try await store.center.peers.routes(for: "b", excluding: [], limit: 10)
            #expect(routes.map { $0.message?.msgID } == msgIDs)
            #expect(routes.map(\.hops) == [1, 1])
            #expect(routes[0].targets.map(\.deviceID) == [devices[0].deviceID, devices[2].deviceID])
            #expect(routes[1].targets.map(\.deviceID) == devices.map(\.deviceID))
            #expect(routes[1].targets.map(\.registrationID) == devices.map(\.registrationID))
            #expect(routes.allSatisfy { $0.message?.push.message?.msgContent == "Hi" })

            let rest = try await store.center.peers.routes(for: "b", excluding: [routes[0].id], limit: 10)
            #expect(rest.map(\.id) == [routes[1].id])
            #expect(try await store.center.peers.routes(for: "b", excluding: [], limit: 1).map(\.id) == [routes[0].id])
            #expect(try await store.center.peers.routes(for: "a", excluding: [], limit: 10).isEmpty)
        }
    }

    /// `LiveHolders`, the one "held by a live node other than this one" rule, as the center's
    /// two statements use it (the accepting statement's use is above): a live peer holds,
    /// this node doesn't count, a dead node holds nothing, an offline device has no holder.
    @Test func onlyALiveNodeOtherThanThisOneHoldsADevice() async throws {
        try await TestDatabase.withStore { store in
            let (appID, devices) = try await setUp(store, devices: 4)
            _ = try await store.gateway.claimSessions([devices[0]], node: "b")
            _ = try await store.gateway.claimSessions([devices[1]], node: "a")
            _ = try await store.gateway.claimSessions([devices[2]], node: "dead")
            let ids = devices.map(\.deviceID)
            let holders = try await store.center.peers.holders(of: ids, except: "a", deadAfter: .seconds(30))
            #expect(holders == [ids[0]: "b"])
            // A bound wider than the dead node's silence: it is live again.
            #expect(try await store.center.peers.holders(of: ids, except: "a", deadAfter: .seconds(7200)) == [ids[0]: "b", ids[2]: "dead"])
            // From b's side, a holds its device.
            #expect(try await store.center.peers.holders(of: ids, except: "b", deadAfter: .seconds(30)) == [ids[1]: "a"])
            // Routing by the same rule.
            let push = try await pending(store, to: devices, appID: appID, notification: false)
            _ = try await store.api.acceptPushes([push], fanningOutTo: nil)
            let message = try #require(try await store.sql.query("SELECT id FROM messages").collect().first?.decode(Int64.self))
            let routed = try await store.center.peers.routeToHolders(ids.map { (message, $0) }, except: "a", deadAfter: .seconds(30), hops: 1)
            #expect(routed == [message: [ids[0]]])
        }
    }
}
