import HeraldCore
import PostgresNIO

/// Copies routed between nodes (``CenterStore/peers``): which live peer holds a device,
/// the copies routed to a node and read back by it, and inbox changes announced to a
/// device's holder.
public struct PeerRouteStore: StoreFacade {
    let core: StoreCore
}

extension CenterStore {
    /// Routing copies to the nodes that hold their devices.
    public var peers: PeerRouteStore { PeerRouteStore(core: core) }
}

/// Copies of one message routed to this node, for devices connected here (``node_routes``).
public struct NodeRoute: Sendable {
    public var id: Int64
    public var messageID: Int64
    /// Nodes the copies have been routed through, this one included.
    public var hops: Int
    /// The copies still `pending` (the others were recalled, replaced or routed since).
    public var targets: [FanOutTarget]
    /// The message, read with the row (nil once it is gone: its retention ended).
    public var message: MessageRecord?
}

extension PeerRouteStore {
    /// The live node other than `node` that holds each device's session, for those of
    /// `deviceIDs` that have one. A device offline, or held by a node whose heartbeat is
    /// older than `deadAfter` (dead, not yet swept), is absent.
    public func holders(of deviceIDs: [Int64], except node: String, deadAfter: Duration) async throws -> [Int64: String] {
        guard !deviceIDs.isEmpty else { return [:] }
        let rows = try await client.query(
            """
            WITH p AS (SELECT \(node)::text AS node, \(deadAfter.timeInterval)::double precision AS dead_after)
            SELECT s.device_id, s.node_id FROM p, device_sessions s JOIN nodes n ON n.node_id = s.node_id
            WHERE s.device_id = ANY(\(deviceIDs)::bigint[])
              AND \(unescaped: LiveHolders.condition(except: "p.node", deadAfter: "p.dead_after"))
            """,
            logger: logger
        )
        var holders: [Int64: String] = [:]
        for try await (deviceID, holder) in rows.decode((Int64, String).self) { holders[deviceID] = holder }
        return holders
    }

    /// Routes the copies among `copies` whose devices a live node other than `node` holds
    /// to that node, in one statement: the lookup in `device_sessions` (joined with
    /// `nodes`: a node whose heartbeat is older than `deadAfter` holds nothing), one row per
    /// node and message (a broadcast's batch is a row per node, not per device), and one
    /// NOTIFY per node. The copies stay `pending` until the node that gets them records
    /// their outcomes. Returns the copies routed, by message.
    public func routeToHolders(
        _ copies: [(messageID: Int64, deviceID: Int64)],
        except node: String,
        deadAfter: Duration,
        hops: Int
    ) async throws -> [Int64: Set<Int64>] {
        guard !copies.isEmpty else { return [:] }
        let rows = try await client.query(
            """
            WITH v AS (
                SELECT * FROM unnest(\(copies.map(\.messageID))::bigint[], \(copies.map(\.deviceID))::bigint[]) AS v(message_id, device_id)
            ), p AS (
                SELECT \(node)::text AS node, \(deadAfter.timeInterval)::double precision AS dead_after
            ), held AS (
                SELECT s.device_id, s.node_id FROM p, device_sessions s JOIN nodes n ON n.node_id = s.node_id
                WHERE s.device_id IN (SELECT device_id FROM v)
                  AND \(unescaped: LiveHolders.condition(except: "p.node", deadAfter: "p.dead_after"))
            ), routed AS (
                INSERT INTO node_routes (node_id, message_id, device_ids, hops)
                SELECT h.node_id, v.message_id, array_agg(v.device_id ORDER BY v.device_id), \(Int32(hops))
                FROM v JOIN held h ON h.device_id = v.device_id
                GROUP BY h.node_id, v.message_id
                RETURNING node_id, message_id, device_ids
            )
            SELECT r.message_id, r.device_ids, w.notified FROM routed r CROSS JOIN (
                SELECT count(x) AS notified FROM (
                    SELECT pg_notify(\(unescaped: ClusterChannel.sql("d.node_id")), 'r')::text AS x FROM (SELECT DISTINCT node_id FROM routed) d
                ) n
            ) w
            """,
            logger: logger
        )
        var routed: [Int64: Set<Int64>] = [:]
        for try await (messageID, deviceIDs, _) in rows.decode((Int64, [Int64], Int64).self) {
            routed[messageID, default: []].formUnion(deviceIDs)
        }
        return routed
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
    /// routed already), each with its copies still `pending` and what routing needs, in one
    /// statement. Rows taken over from a dead node keep their ids, so this reads from the
    /// first row each time rather than after a cursor; the rows are few, each deleted once
    /// routed.
    public func routes(for node: String, excluding: [Int64], limit: Int) async throws -> [NodeRoute] {
        // herald_node_routes (migrations 0024 and 0026): planned once per connection,
        // through indexes only. Its columns are the route's id, message id and hops, then
        // those FanOutTarget and MessageRecord read, in their order. A route's first row
        // holds its message and no device, each row after it a copy and no message.
        let rows = try await client.query(
            "SELECT * FROM herald_node_routes(\(node), \(excluding)::bigint[], \(Int64(limit)))",
            logger: logger
        )
        var routes: [NodeRoute] = []
        for try await row in rows {
            let columns = row.makeRandomAccess()
            let id = try columns[0].decode(Int64.self)
            if routes.last?.id != id {
                routes.append(
                    NodeRoute(
                        id: id,
                        messageID: try columns[1].decode(Int64.self),
                        hops: Int(try columns[2].decode(Int32.self)),
                        targets: [],
                        message: try MessageRecord(columns, at: 3 + FanOutTarget.columnCount, recentPushes: recentPushes)
                    )
                )
            }
            if let target = try FanOutTarget(columns, at: 3) { routes[routes.count - 1].targets.append(target) }
        }
        return routes
    }
}
