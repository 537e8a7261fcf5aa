import Foundation
import HeraldCore
import Logging
import PostgresNIO

/// The store as a node's membership of the cluster uses it, on the delivery pool: the
/// node's registration and heartbeat, the declaration of dead nodes, leases on the work
/// that runs on one node at a time, and the node's NOTIFY channel.
public struct ClusterStore: StoreFacade {
    let core: StoreCore

    init(pool: DeliveryPool, sealer: CredentialSealer, recentPushes: RecentPushes, msgIDs: MessageIDs, eventApps: EventApps, logger: Logger) {
        core = StoreCore(
            client: pool.client,
            sealer: sealer,
            recentPushes: recentPushes,
            msgIDs: msgIDs,
            eventApps: eventApps,
            logger: logger
        )
    }
}

/// A node of the cluster as its row shows it.
public struct NodeRecord: Sendable, Hashable {
    public var nodeID: String
    public var startedAt: Date
    public var heartbeatAt: Date
    public var draining: Bool
    /// Its heartbeat is recent (by the database's clock).
    public var alive: Bool
    public var mqttAddress: String?
    public var httpAddress: String?
}

extension ClusterStore {
    /// Registers `node`, or registers it again after it was declared dead. Sessions that
    /// name it are cleared first: a node registering holds no connection yet (a process
    /// restarted with the same configured id comes back empty-handed; what the process
    /// before sent may be unrecorded, ``SessionClaim/earlierMayHaveSent``). Its peers are told
    /// (``ClusterChannel/cluster``), so they route to it at once.
    public func register(node: String) async throws {
        try await transaction { connection in
            try await connection.query(
                "UPDATE device_sessions SET node_id = NULL, last_seen_at = now(), unrecorded = true WHERE node_id = \(node)",
                logger: logger
            )
            try await connection.query(
                """
                INSERT INTO nodes (node_id) VALUES (\(node))
                ON CONFLICT (node_id) DO UPDATE
                SET started_at = now(), heartbeat_at = now(), draining_at = NULL
                """,
                logger: logger
            )
            try await connection.query("SELECT pg_notify(\(ClusterChannel.cluster), \(node))", logger: logger)
        }
    }

    /// Renews the node's heartbeat, with the address its peers reach its HTTP API at once it
    /// is known. False when its row is gone: another node declared it dead (it stopped for
    /// longer than the liveness timeout), and whatever it holds was cleared or handed over.
    public func heartbeat(node: String, draining: Bool, httpAddress: String? = nil) async throws -> Bool {
        let rows = try await client.query(
            """
            UPDATE nodes SET heartbeat_at = now(),
                draining_at = CASE WHEN \(draining) THEN COALESCE(draining_at, now()) END,
                http_address = COALESCE(\(httpAddress), http_address)
            WHERE node_id = \(node) RETURNING node_id
            """,
            logger: logger
        )
        return try await rows.count() == 1
    }

    /// Declares dead the nodes whose heartbeat is older than `deadAfter`, in one statement
    /// (the node that deletes a row does the rest): their devices' sessions are cleared
    /// (last seen at their node's last heartbeat; what they sent may be unrecorded,
    /// ``SessionClaim/earlierMayHaveSent``). Route rows of nodes no longer
    /// registered (dead, or gone without handing them over) are taken by `node`. The dead
    /// nodes' jobs and the webhooks they were sending to are given back at once (the jobs
    /// with a NOTIFY), not when their leases end, except `node`'s own, when it finds itself
    /// declared dead: it may still be working on them. Returns the nodes declared dead, and
    /// how many route rows `node` took.
    public func sweepDeadNodes(deadAfter: Duration, by node: String) async throws -> (dead: [String], adopted: Int) {
        let rows = try await client.query(
            """
            WITH dead AS (
                DELETE FROM nodes WHERE heartbeat_at < now() - make_interval(secs => \(deadAfter.timeInterval))
                RETURNING node_id, heartbeat_at
            ), cleared AS (
                UPDATE device_sessions s SET node_id = NULL, last_seen_at = dead.heartbeat_at, unrecorded = true
                FROM dead WHERE s.node_id = dead.node_id
            ), adopted AS (
                -- The statement's snapshot still has the rows `dead` deletes: their nodes'
                -- routes are named, not found missing.
                UPDATE node_routes r SET node_id = \(node)
                WHERE r.node_id <> \(node)
                    AND (r.node_id IN (SELECT node_id FROM dead) OR NOT EXISTS (SELECT 1 FROM nodes n WHERE n.node_id = r.node_id))
                RETURNING r.id
            ), released AS (
                -- The dead nodes' jobs are anyone's now, not once their leases run out.
                UPDATE push_jobs j SET leased_until = NULL, leased_by = NULL
                FROM dead WHERE j.leased_by = dead.node_id AND dead.node_id <> \(node)
                RETURNING j.id
            ), woken AS (
                SELECT pg_notify('herald_jobs', count(*)::text) FROM released HAVING count(*) > 0
            ), webhooks_released AS (
                UPDATE webhooks w SET leased_by = NULL, leased_until = NULL, released_at = now()
                FROM dead WHERE w.leased_by = dead.node_id AND dead.node_id <> \(node)
            )
            SELECT (SELECT array_agg(node_id) FROM dead), (SELECT count(*) FROM adopted), (SELECT count(*) FROM woken)
            """,
            logger: logger
        )
        for try await (dead, adopted, _) in rows.decode(([String]?, Int64, Int64).self) {
            return (dead ?? [], Int(adopted))
        }
        return ([], 0)
    }

    /// The node leaves the cluster (the end of a drain): its devices' sessions are
    /// cleared and its row deleted; route rows left to it are taken by the next sweep.
    public func leave(node: String) async throws {
        try await transaction { connection in
            try await connection.query(
                "UPDATE device_sessions SET node_id = NULL, last_seen_at = now() WHERE node_id = \(node)",
                logger: logger
            )
            try await connection.query("DELETE FROM nodes WHERE node_id = \(node)", logger: logger)
        }
    }

    /// The registered nodes, the dead not yet swept among them (not `alive`: heartbeat
    /// older than `deadAfter`).
    public func nodes(deadAfter: Duration) async throws -> [NodeRecord] {
        let rows = try await client.query(
            """
            SELECT node_id, started_at, heartbeat_at, draining_at IS NOT NULL,
                   heartbeat_at > now() - make_interval(secs => \(deadAfter.timeInterval)), mqtt_address, http_address
            FROM nodes ORDER BY node_id
            """,
            logger: logger
        )
        var nodes: [NodeRecord] = []
        let columns = rows.decode((String, Date, Date, Bool, Bool, String?, String?).self)
        for try await (id, started, heartbeat, draining, alive, mqtt, http) in columns {
            nodes.append(
                NodeRecord(
                    nodeID: id,
                    startedAt: started,
                    heartbeatAt: heartbeat,
                    draining: draining,
                    alive: alive,
                    mqttAddress: mqtt,
                    httpAddress: http
                )
            )
        }
        return nodes
    }

    /// Takes or renews the lease on the cluster-wide task `name` for `node`: true when
    /// `node` holds it for `lease` from now (it held it, or its holder let it run out).
    public func holdTask(_ name: String, node: String, lease: Duration) async throws -> Bool {
        let rows = try await client.query(
            """
            INSERT INTO cluster_tasks AS t (name, holder, leased_until)
            VALUES (\(name), \(node), now() + make_interval(secs => \(lease.timeInterval)))
            ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, leased_until = EXCLUDED.leased_until
            WHERE t.holder = EXCLUDED.holder OR t.leased_until < now()
            RETURNING holder
            """,
            logger: logger
        )
        return try await rows.count() == 1
    }
}

/// What a node is told on its channels.
public enum ClusterNotice: Sendable, Hashable {
    /// Another node claimed a device this node may hold, with this epoch.
    case sessionClaimed(registrationID: String, epoch: Int64)
    /// Copies were routed to this node (``node_routes``).
    case routes
    /// Another node stored messages in the inbox of a device this node may hold.
    case inboxChanged(registrationID: String)

    /// Parses a payload of the node's own channel: `t:<epoch>:<registration id>`, `r` or
    /// `i:<registration id>`.
    public init?(nodePayload payload: String) {
        if payload == "r" {
            self = .routes
            return
        }
        if payload.hasPrefix("i:") {
            self = .inboxChanged(registrationID: String(payload.dropFirst(2)))
            return
        }
        let parts = payload.split(separator: ":", maxSplits: 2)
        guard parts.count == 3, parts[0] == "t", let epoch = Int64(parts[1]) else { return nil }
        self = .sessionClaimed(registrationID: String(parts[2]), epoch: epoch)
    }
}
