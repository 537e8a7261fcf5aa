import Foundation
import HeraldCore

/// The message center running in the same process as the push API, which takes the pushes
/// this process accepts straight from the commit that stored them.
///
/// A push whose path fans out at acceptance (``PushPath/fansOutAtAcceptance``) is fanned
/// out in the statement that accepts it: its copies are stored with their inbox numbers and
/// its job is committed already leased to this node (``node``, for ``lease``) and fanned
/// out to the end. The acceptor then hands it to ``receive(_:)``, and the center routes its
/// copies, records their outcomes and finishes the job. Nothing goes through the queue in
/// between: no NOTIFY, no claim, no second read of the message. The job row is what makes
/// it durable: if this process dies before the job is finished, its lease runs out and any
/// center takes it over, routing the copies still pending, as for any job whose worker died.
///
/// In a cluster, the same statement routes the copies whose devices another live node holds
/// to that node (``peerRouting``), so a push to a device connected elsewhere costs one
/// commit, as it does here; the nodes are woken once per commit, after it.
public protocol FannedOutPushSink: Sendable {
    /// This node's name, which the jobs fanned out at acceptance are leased to.
    var node: String { get }
    /// How long those leases hold before another node may take the jobs over.
    var lease: Duration { get }
    /// Set while other nodes are live: copies for devices they hold are routed to them in
    /// the statement that accepts the push.
    var peerRouting: PeerRouting? { get }
    /// Takes the pushes one commit fanned out, in commit order, once it is committed.
    func receive(_ pushes: [FannedOutPush])
}

/// A push fanned out when it was accepted: its job (leased to this node, fanned out to the
/// end), its message and the copies to route.
public struct FannedOutPush: Sendable {
    public var job: PushJob
    public var message: MessageRecord
    public var targets: [FanOutTarget]
    /// The payloads stored in the inboxes (nil for a push not stored: time to live 0).
    public var devicePayloads: DevicePayloads?
    /// Copies routed to the nodes holding their devices in the accepting statement (not
    /// among ``targets``: those nodes route them).
    public var routedToPeers = 0
}

/// How the accepting statement routes copies to other nodes (``FannedOutPushSink/peerRouting``).
public struct PeerRouting: Sendable {
    /// A node whose heartbeat is older than this holds no device.
    public var deadAfter: Duration

    public init(deadAfter: Duration) {
        self.deadAfter = deadAfter
    }
}
