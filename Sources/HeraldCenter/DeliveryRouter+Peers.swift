import CoreMetrics
import HeraldCore
import HeraldStore

/// The router's part in the cluster: copies for devices another node holds go to that
/// node, and nodes holding devices whose inboxes this node changed are told.
extension DeliveryRouter {
    /// Routes the copies the planner sends to peers (``RoutePlanner/FirstHop/peer``) to the
    /// live nodes that hold their devices (one statement for the lookup and the routing);
    /// returns, per message, those no live peer holds: they fall back here.
    func routeToPeers(_ prepared: [Prepared], _ candidates: [[FanOutTarget]], hops: Int) async throws -> [[FanOutTarget]] {
        guard let cluster, candidates.contains(where: { !$0.isEmpty }) else { return candidates }
        let pairs = zip(prepared, candidates).flatMap { prepared, targets in targets.map { (messageID: prepared.message.id, deviceID: $0.deviceID) } }
        let routed = try await store.peers.routeToHolders(pairs, except: cluster.node, deadAfter: cluster.deadAfter, hops: hops + 1)
        guard !routed.isEmpty else { return candidates }
        var unheld = candidates
        var count = 0
        for index in unheld.indices {
            guard let devices = routed[prepared[index].message.id] else { continue }
            unheld[index].removeAll { target in
                guard devices.contains(target.deviceID) else { return false }
                count += 1
                return true
            }
        }
        metrics.routedToPeers.increment(by: count)
        return unheld
    }

    /// Tells the nodes holding any of `targets` (devices not connected here) that their
    /// inboxes changed, so their connections load what this node stored there.
    func inboxesChanged(_ targets: [FanOutTarget]) async throws {
        guard let cluster, cluster.hasPeers, !targets.isEmpty else { return }
        let holders = try await store.peers.holders(of: targets.map(\.deviceID), except: cluster.node, deadAfter: cluster.deadAfter)
        let devices = targets.compactMap { target in holders[target.deviceID].map { (node: $0, registrationID: target.registrationID) } }
        try await store.peers.inboxesChanged(devices)
    }
}
