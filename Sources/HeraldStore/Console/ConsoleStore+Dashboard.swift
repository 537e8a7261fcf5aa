import Foundation
import HeraldCore
import PostgresNIO

/// What the console's dashboard reads: the cluster's nodes and their samples
/// (``ClusterStore/record(_:keep:)``).
extension ConsoleStore {
    /// Every node's samples since `since`, oldest first.
    public func samples(since: Duration) async throws -> [NodeSample] {
        let rows = try await client.query(
            """
            SELECT node_id, at, connected, accepted, delivered_tcp, delivered_apns, apns_ok, apns_failed FROM node_samples
            WHERE at >= now() - make_interval(secs => \(since.timeInterval)) ORDER BY at, node_id
            """,
            logger: logger
        )
        var samples: [NodeSample] = []
        for try await row in rows.decode((String, Date, Int64, Int64, Int64, Int64, Int64, Int64).self) {
            samples.append(
                NodeSample(
                    nodeID: row.0,
                    at: row.1,
                    connected: row.2,
                    accepted: row.3,
                    deliveredTCP: row.4,
                    deliveredAPNs: row.5,
                    apnsOK: row.6,
                    apnsFailed: row.7
                )
            )
        }
        return samples
    }

    /// The nodes registered now.
    public func nodes() async throws -> [NodeState] {
        let rows = try await client.query(
            "SELECT node_id, started_at, heartbeat_at, draining_at, http_address, now() FROM nodes ORDER BY node_id",
            logger: logger
        )
        var nodes: [NodeState] = []
        for try await row in rows.decode((String, Date, Date, Date?, String?, Date).self) {
            nodes.append(NodeState(nodeID: row.0, startedAt: row.1, heartbeatAt: row.2, drainingAt: row.3, httpAddress: row.4, now: row.5))
        }
        return nodes
    }
}
