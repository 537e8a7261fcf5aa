import Configuration
import Foundation

/// What several components of one Herald node share: its name, the recall window and its
/// part in a cluster.
/// The gateway, the message center and the API each take these from here instead of having
/// defaults of their own.
public struct NodeConfiguration: Sendable, Hashable {
    /// This node's name in the cluster: on its row in `nodes`, the sessions of the devices
    /// connected to it, the jobs it leases.
    public var nodeID: String
    /// How long after sending a message can be recalled (the API checks it, the center
    /// keeps APNs copies recallable that long).
    public var recallWindow: Duration
    /// Heartbeat, liveness timeout and drain rate.
    public var cluster: ClusterConfiguration
    /// The addresses webhooks, callbacks and SMS providers may reach (the API checks literal
    /// ones, the center every resolved one).
    public var outbound: OutboundAddressRule

    /// The default node name: the host name and a suffix drawn when the process starts, so
    /// a restarted node is a new node (what the old one held is not mistaken for its).
    public static let defaultNodeID: String =
        "\(ProcessInfo.processInfo.hostName)-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"

    /// The default recall window: a day.
    public static let defaultRecallWindow: Duration = .seconds(86_400)

    public init(
        nodeID: String = defaultNodeID,
        recallWindow: Duration = defaultRecallWindow,
        cluster: ClusterConfiguration = ClusterConfiguration(),
        outbound: OutboundAddressRule = OutboundAddressRule()
    ) {
        self.nodeID = nodeID
        self.recallWindow = recallWindow
        self.cluster = cluster
        self.outbound = outbound
    }
}

extension NodeConfiguration {
    /// Reads the node's settings from Herald's configuration.
    ///
    /// Configuration keys:
    /// - `nodeID` (string, default: the host name and a per-start suffix): this node's name.
    /// - `cluster.*`: see ``ClusterConfiguration/init(reader:)``.
    /// - `center.recallWindow` (int, seconds, default: 86400, 60 to 864000): how long after
    ///   sending a message can be recalled.
    /// - `outbound.allowRanges` (string, default: none): address ranges (CIDR, comma-separated,
    ///   such as `127.0.0.0/8,::1`) that webhooks, callbacks and SMS providers may reach
    ///   although they are internal (``OutboundAddressRule``).
    ///
    /// - Parameter reader: Herald's configuration (not scoped: the keys are at its root).
    /// - Throws: ``ConfigurationError`` naming the key of a value out of range.
    public init(reader: ConfigReader) throws {
        let root = ConfigSection(reader)
        let outbound = root.section("outbound")
        var allowed: [IPRange] = []
        if let ranges = outbound.optionalString("allowRanges") {
            switch OutboundAddressRule.ranges(ranges) {
            case .success(let ranges): allowed = ranges
            case .failure(let invalid): throw outbound.error("allowRanges", "\"\(invalid.entry)\" is not an address range such as 10.0.0.0/8")
            }
        }
        self.init(
            nodeID: root.string("nodeID", default: Self.defaultNodeID),
            recallWindow: try root.section("center").seconds("recallWindow", default: Self.defaultRecallWindow, in: 60...864_000),
            cluster: try ClusterConfiguration(reader: reader),
            outbound: OutboundAddressRule(allowed: allowed)
        )
    }
}
