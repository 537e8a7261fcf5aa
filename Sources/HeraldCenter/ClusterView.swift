/// What the message center reads of its node's part in a cluster (the node's
/// `ClusterMembership`, in HeraldNode, which owns it): who this node is, whether other live
/// nodes exist, how long a node's heartbeat may be silent, the wake-ups of route rows
/// addressed to this node, and the cluster-wide tasks it holds a lease on.
public protocol ClusterView: Sendable {
    var node: String { get }
    /// Other live nodes exist: copies may be routed to them.
    var hasPeers: Bool { get }
    /// A node whose heartbeat is older is dead.
    var deadAfter: Duration { get }
    /// Signalled when route rows for this node may have arrived.
    var routeWakeUps: WakeSignal { get }
    /// Whether this node holds (or now takes) the lease of a cluster-wide task.
    func holds(_ name: String, lease: Duration) async -> Bool
}
