import CoreMetrics
import HeraldCore
import HeraldStore

/// The router's part in the cluster: copies for devices another node holds go to that
/// node, and nodes holding devices whose inboxes this node changed are told.
extension DeliveryRouter {
    /// Copies routed through more nodes than this fall back where they are.
    static let maxHops = 3

    /// Takes out of `elsewhere` the copies whose devices another live node holds, and
    /// routes them there (one statement for the lookup and the routing). A notification for
    /// a device in the background stays: it goes to APNs from here, as it would from its
    /// node; so does a Live Activity push, which only APNs carries.
    func routeToPeers(_ batches: [(prepared: Prepared, targets: [FanOutTarget])], _ elsewhere: inout [[FanOutTarget]], hops: Int) async throws {
        guard let cluster, cluster.hasPeers, hops < Self.maxHops else { return }
        func mayBeElsewhere(_ target: FanOutTarget, _ index: Int) -> Bool {
            !batches[index].prepared.isLiveActivity && !(batches[index].prepared.hasNotification && target.inBackground)
        }
        var candidates: [(messageID: Int64, deviceID: Int64)] = []
        for (index, targets) in elsewhere.enumerated() {
            let messageID = batches[index].prepared.message.id
            for target in targets where mayBeElsewhere(target, index) { candidates.append((messageID, target.deviceID)) }
        }
        guard !candidates.isEmpty else { return }
        let routed = try await store.routeToHolders(candidates, except: cluster.node, deadAfter: cluster.configuration.deadAfter, hops: hops + 1)
        guard !routed.isEmpty else { return }
        var count = 0
        for index in elsewhere.indices {
            guard let devices = routed[batches[index].prepared.message.id] else { continue }
            elsewhere[index].removeAll { target in
                guard mayBeElsewhere(target, index), devices.contains(target.deviceID) else { return false }
                count += 1
                return true
            }
        }
        metrics.routedToPeers.increment(by: count)
    }

    /// Tells the nodes holding any of `targets` (devices not connected here) that their
    /// inboxes changed, so their connections load what this node stored there.
    func inboxesChanged(_ targets: [FanOutTarget]) async throws {
        guard let cluster, cluster.hasPeers, !targets.isEmpty else { return }
        let holders = try await store.holders(of: targets.map(\.deviceID), except: cluster.node, deadAfter: cluster.configuration.deadAfter)
        let devices = targets.compactMap { target in holders[target.deviceID].map { (node: $0, registrationID: target.registrationID) } }
        try await store.inboxesChanged(devices)
    }
}
