import HeraldCore
import PostgresNIO

/// Copies of one message routed to this node, for devices connected here (``node_routes``).
public struct NodeRoute: Sendable, Hashable {
    public var id: Int64
    public var messageID: Int64
    public var deviceIDs: [Int64]
    /// Nodes the copies have been routed through, this one included.
    public var hops: Int
}

/// A copy to route to the node that holds its device.
public struct RemoteCopy: Sendable, Hashable {
    public var node: String
    public var messageID: Int64
    public var deviceID: Int64

    public init(node: String, messageID: Int64, deviceID: Int64) {
        self.node = node
        self.messageID = messageID
        self.deviceID = deviceID
    }
}

extension CenterStore {
    /// The live node other than `node` that holds each device's session, for those of
    /// `deviceIDs` that have one. A device offline, or held by a node whose heartbeat is
    /// older than `deadAfter` (dead, not yet swept), is absent.
    public func holders(of deviceIDs: [Int64], except node: String, deadAfter: Duration) async throws -> [Int64: String] {
        guard !deviceIDs.isEmpty else { return [:] }
        let rows = try await client.query(
            """
            SELECT s.device_id, s.node_id FROM device_sessions s JOIN nodes n ON n.node_id = s.node_id
            WHERE s.device_id = ANY(\(deviceIDs)::bigint[]) AND s.node_id <> \(node)
              AND n.heartbeat_at > now() - make_interval(secs => \(deadAfter.intervalSeconds))
            """,
            logger: logger
        )
        var holders: [Int64: String] = [:]
        for try await (deviceID, holder) in rows.decode((Int64, String).self) { holders[deviceID] = holder }
        return holders
    }

    /// Routes copies to the nodes that hold their devices, in one statement: one row per
    /// node and message (a broadcast's batch is a row per node, not per device), and one
    /// NOTIFY per node (deduplicated by PostgreSQL within the statement's transaction).
    /// The copies stay `pending` until the node that gets them records their outcomes.
    public func route(_ copies: [RemoteCopy], hops: Int) async throws {
        guard !copies.isEmpty else { return }
        try await client.query(
            """
            WITH routed AS (
                INSERT INTO node_routes (node_id, message_id, device_ids, hops)
                SELECT v.node, v.message, array_agg(v.device ORDER BY v.device), \(Int32(hops))
                FROM unnest(\(copies.map(\.node))::text[], \(copies.map(\.messageID))::bigint[], \(copies.map(\.deviceID))::bigint[])
                    AS v(node, message, device)
                GROUP BY v.node, v.message
                RETURNING node_id
            )
            SELECT pg_notify(\(unescaped: ClusterChannel.sql("r.node_id")), 'r')::text FROM (SELECT DISTINCT node_id FROM routed) r
            """,
            logger: logger
        )
    }

    /// Tells the nodes holding these devices that their inboxes changed (a recall command
    /// stored by this node), so their connections load it now. A lost notification only
    /// delays it: the next load of the inbox (a reconnect, a later message) brings it.
    public func inboxesChanged(_ devices: [(node: String, registrationID: String)]) async throws {
        guard !devices.isEmpty else { return }
        try await client.query(
            """
            SELECT pg_notify(\(unescaped: ClusterChannel.sql("v.node")), 'i:' || v.registration_id)::text
            FROM unnest(\(devices.map(\.node))::text[], \(devices.map(\.registrationID))::text[]) AS v(node, registration_id)
            """,
            logger: logger
        )
    }

    /// The route rows addressed to `node`, oldest first, but those in `excluding` (being
    /// routed already). Rows taken over from a dead node keep their ids, so this reads
    /// from the first row each time rather than after a cursor; the rows are few, each
    /// deleted once routed.
    public func routes(for node: String, excluding: [Int64], limit: Int) async throws -> [NodeRoute] {
        let rows = try await client.query(
            """
            SELECT id, message_id, device_ids, hops FROM node_routes
            WHERE node_id = \(node) AND NOT (id = ANY(\(excluding)::bigint[])) ORDER BY id LIMIT \(Int64(limit))
            """,
            logger: logger
        )
        var routes: [NodeRoute] = []
        for try await (id, messageID, deviceIDs, hops) in rows.decode((Int64, Int64, [Int64], Int32).self) {
            routes.append(NodeRoute(id: id, messageID: messageID, deviceIDs: deviceIDs, hops: Int(hops)))
        }
        return routes
    }

    /// Deletes route rows whose copies were routed (their outcomes recorded).
    public func finishRoutes(_ ids: [Int64]) async throws {
        guard !ids.isEmpty else { return }
        try await client.query("DELETE FROM node_routes WHERE id = ANY(\(ids)::bigint[])", logger: logger)
    }

    /// The copies of `routes` still `pending`, with what routing needs, by message: one
    /// statement for any number of route rows.
    public func pendingTargets(of routes: [NodeRoute]) async throws -> [Int64: [FanOutTarget]] {
        var messages: [Int64] = []
        var devices: [Int64] = []
        for route in routes {
            for device in route.deviceIDs {
                messages.append(route.messageID)
                devices.append(device)
            }
        }
        guard !devices.isEmpty else { return [:] }
        let rows = try await client.query(
            """
            SELECT dl.message_id, \(unescaped: FanOutTarget.columns), dl.inbox_seq, d.badge
            FROM unnest(\(messages)::bigint[], \(devices)::bigint[]) AS v(message_id, device_id)
            JOIN deliveries dl ON dl.message_id = v.message_id AND dl.device_id = v.device_id
            JOIN devices d ON d.id = dl.device_id
            WHERE dl.state = 'pending'
            ORDER BY dl.message_id, dl.device_id
            """,
            logger: logger
        )
        var targets: [Int64: [FanOutTarget]] = [:]
        for try await row in rows {
            let columns = row.makeRandomAccess()
            if let target = try FanOutTarget(columns, at: 1) { targets[try columns[0].decode(Int64.self), default: []].append(target) }
        }
        return targets
    }
}
