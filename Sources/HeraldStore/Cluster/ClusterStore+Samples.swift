import Foundation
import HeraldCore
import PostgresNIO

/// A node's figures at one moment: the counters since it started, and the devices
/// connected to it then.
public struct NodeSample: Sendable, Hashable {
    public var nodeID: String
    public var at: Date
    public var connected: Int64
    public var accepted: Int64
    public var deliveredTCP: Int64
    public var deliveredAPNs: Int64
    public var apnsOK: Int64
    public var apnsFailed: Int64

    public init(
        nodeID: String,
        at: Date,
        connected: Int64,
        accepted: Int64,
        deliveredTCP: Int64,
        deliveredAPNs: Int64,
        apnsOK: Int64,
        apnsFailed: Int64
    ) {
        self.nodeID = nodeID
        self.at = at
        self.connected = connected
        self.accepted = accepted
        self.deliveredTCP = deliveredTCP
        self.deliveredAPNs = deliveredAPNs
        self.apnsOK = apnsOK
        self.apnsFailed = apnsFailed
    }
}

/// A node as the cluster's table has it.
public struct NodeState: Sendable, Hashable {
    public var nodeID: String
    public var startedAt: Date
    public var heartbeatAt: Date
    public var drainingAt: Date?
    public var httpAddress: String?
    /// The database's clock when read: compare `heartbeatAt` with it, not the node's.
    public var now: Date
}

extension ClusterStore {
    /// Records the node's sample, and forgets samples older than `keep` (anyone's).
    public func record(_ sample: NodeSample, keep: Duration = .seconds(7200)) async throws {
        try await client.query(
            """
            WITH forgotten AS (DELETE FROM node_samples WHERE at < now() - make_interval(secs => \(keep.timeInterval)))
            INSERT INTO node_samples (node_id, at, connected, accepted, delivered_tcp, delivered_apns, apns_ok, apns_failed)
            VALUES (\(sample.nodeID), \(sample.at), \(sample.connected), \(sample.accepted), \(sample.deliveredTCP),
                    \(sample.deliveredAPNs), \(sample.apnsOK), \(sample.apnsFailed))
            ON CONFLICT DO NOTHING
            """,
            logger: logger
        )
    }
}
