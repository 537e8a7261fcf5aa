import HeraldCore
import PostgresNIO

/// A device's connection as the cluster knows it: the epoch its claim took.
public struct SessionEpoch: Sendable, Hashable {
    public var deviceID: Int64
    public var epoch: Int64

    public init(deviceID: Int64, epoch: Int64) {
        self.deviceID = deviceID
        self.epoch = epoch
    }
}

/// What claiming a device's session answered: the connection's epoch, and the node that
/// held the device before, if another one did (it is told to close its connection).
public struct SessionClaim: Sendable, Hashable {
    public var epoch: Int64
    public var previousNode: String?
    /// An earlier connection of the device may have sent it copies that no record shows as
    /// sent: one still held the session (on any node, this one too), or its node died
    /// before writing its positions (`device_sessions.unrecorded`, migration 0028). The
    /// first replay of the new connection carries DUP on everything it sends.
    public var earlierMayHaveSent: Bool

    public init(epoch: Int64, previousNode: String?, earlierMayHaveSent: Bool = false) {
        self.epoch = epoch
        self.previousNode = previousNode
        self.earlierMayHaveSent = earlierMayHaveSent
    }
}

extension GatewayStore {
    /// Claims the sessions of newly connected devices for `node`, in one statement: each
    /// device's row is locked (in id order), its epoch bumped, and the node that held it
    /// before is sent a NOTIFY naming the new epoch and the device, so it closes its
    /// connection now rather than at its next check (``supersededSessions(_:)``). A device twice in `devices` gets
    /// two epochs, in order (the later connection wins). Returns one claim per entry.
    public func claimSessions(_ devices: [DeviceIdentity], node: String) async throws -> [SessionClaim] {
        guard !devices.isEmpty else { return [] }
        var counts: [Int64: Int64] = [:]
        var registrations: [Int64: String] = [:]
        for device in devices {
            counts[device.deviceID, default: 0] += 1
            registrations[device.deviceID] = device.registrationID
        }
        let ids = counts.keys.sorted()
        let numbers = ids.map { counts[$0]! }
        let registrationIDs = ids.map { registrations[$0]! }
        // One statement. The rows that exist are locked first (in id order, their latest
        // versions) by `old`, which the UPDATE joins, so the holder before the claim is
        // read before the row changes (a lock taken after the change, in the same
        // statement, would skip the row). New rows are inserted; one inserted meanwhile by
        // another node makes the insert an update, whose previous holder isn't told (its
        // heartbeat's check closes that connection).
        let rows = try await client.query(
            """
            WITH v AS (
                SELECT * FROM unnest(\(ids)::bigint[], \(numbers)::bigint[], \(registrationIDs)::text[]) AS v(id, n, registration_id)
                WHERE EXISTS (SELECT 1 FROM devices d WHERE d.id = v.id)
            ), old AS (
                SELECT s.device_id, s.node_id, s.node_id IS NOT NULL OR s.unrecorded AS unsure
                FROM device_sessions s WHERE s.device_id IN (SELECT id FROM v)
                ORDER BY s.device_id FOR UPDATE OF s
            ), updated AS (
                UPDATE device_sessions s
                SET epoch = s.epoch + v.n, node_id = \(node), connected_at = now(), last_seen_at = now(), unrecorded = false
                FROM v JOIN old ON old.device_id = v.id
                WHERE s.device_id = v.id
                RETURNING s.device_id, s.epoch, NULLIF(old.node_id, \(node)) AS previous, old.unsure
            ), inserted AS (
                -- An insert that became an update (another node inserted the row
                -- meanwhile, xmax set) took the device from a live connection.
                INSERT INTO device_sessions AS s (device_id, epoch, node_id, connected_at, last_seen_at)
                SELECT v.id, v.n, \(node), now(), now() FROM v WHERE v.id NOT IN (SELECT device_id FROM old) ORDER BY v.id
                ON CONFLICT (device_id) DO UPDATE
                SET epoch = s.epoch + EXCLUDED.epoch, node_id = EXCLUDED.node_id, connected_at = now(), last_seen_at = now(),
                    unrecorded = false
                RETURNING s.device_id, s.epoch, NULL::text AS previous, s.xmax::text <> '0' AS unsure
            ), claimed AS (
                SELECT * FROM updated UNION ALL SELECT * FROM inserted
            )
            SELECT c.device_id, c.epoch, c.previous, c.unsure,
                   CASE WHEN c.previous IS NOT NULL
                        THEN pg_notify(\(unescaped: ClusterChannel.sql("c.previous")), 't:' || c.epoch || ':' || v.registration_id)::text END
            FROM claimed c JOIN v ON v.id = c.device_id
            """,
            logger: logger
        )
        var latest: [Int64: (epoch: Int64, previous: String?, unsure: Bool)] = [:]
        for try await (deviceID, epoch, previous, unsure, _) in rows.decode((Int64, Int64, String?, Bool, String?).self) {
            latest[deviceID] = (epoch, previous, unsure)
        }
        // The entries of one device get its epochs in order, the last the newest; every
        // entry after the first took the device from the one before it.
        var seen: [Int64: Int64] = [:]
        return devices.map { device in
            guard let (epoch, previous, unsure) = latest[device.deviceID] else { return SessionClaim(epoch: 0, previousNode: nil) }
            let index = seen[device.deviceID, default: 0]
            seen[device.deviceID] = index + 1
            return SessionClaim(
                epoch: epoch - counts[device.deviceID]! + 1 + index,
                previousNode: previous,
                earlierMayHaveSent: unsure || index > 0
            )
        }
    }

    /// Marks devices offline, each only if its session is still the one named (a newer
    /// connection, here or on another node, is left alone).
    public func releaseSessions(_ sessions: [SessionEpoch]) async throws {
        guard !sessions.isEmpty else { return }
        let sorted = sessions.sorted { $0.deviceID < $1.deviceID }
        try await client.query(
            """
            UPDATE device_sessions s SET node_id = NULL, last_seen_at = now()
            FROM unnest(\(sorted.map(\.deviceID))::bigint[], \(sorted.map(\.epoch))::bigint[]) AS v(id, epoch)
            WHERE s.device_id = v.id AND s.epoch = v.epoch AND s.node_id IS NOT NULL
            """,
            logger: logger
        )
    }

    /// The sessions among `sessions` that a newer connection has claimed since, each with
    /// the newer epoch: their connections are to be closed.
    public func supersededSessions(_ sessions: [SessionEpoch]) async throws -> [SessionEpoch] {
        guard !sessions.isEmpty else { return [] }
        let rows = try await client.query(
            """
            SELECT v.id, s.epoch FROM unnest(\(sessions.map(\.deviceID))::bigint[], \(sessions.map(\.epoch))::bigint[]) AS v(id, epoch)
            JOIN device_sessions s ON s.device_id = v.id WHERE s.epoch > v.epoch
            """,
            logger: logger
        )
        var superseded: [SessionEpoch] = []
        for try await (deviceID, epoch) in rows.decode((Int64, Int64).self) {
            superseded.append(SessionEpoch(deviceID: deviceID, epoch: epoch))
        }
        return superseded
    }
}
