import Foundation
import HeraldCore
import PostgresNIO

extension GatewayStore {
    /// Checks a device's MQTT credentials: client id = registration id, user name = app
    /// key, password = device secret.
    public func authenticateDevice(
        registrationID: String,
        appKey: String,
        deviceSecret: String
    ) async throws -> Result<DeviceIdentity, DeviceCredentialFailure> {
        guard Identifiers.isRegistrationID(registrationID) else { return .failure(.unknownDevice) }
        let rows = try await client.query(
            """
            SELECT d.id, d.app_id, a.app_key, d.secret_hash FROM devices d JOIN apps a ON a.id = d.app_id
            WHERE d.registration_id = \(registrationID)
            """,
            logger: logger
        )
        for try await (deviceID, appID, key, hash) in rows.decode((Int64, Int64, String, Data?).self) {
            guard key == appKey else { return .failure(.notAuthorised) }
            // An imported device connects once it has claimed its registration (and got a secret).
            guard let hash, SecretHash.matches(deviceSecret, stored: Array(hash)) else { return .failure(.badCredentials) }
            return .success(DeviceIdentity(deviceID: deviceID, appID: appID, registrationID: registrationID))
        }
        return .failure(.unknownDevice)
    }

    /// Stores a message in a device's inbox under the device's next sequence number (nil:
    /// no such device).
    public func enqueue(deviceID: Int64, msgID: String, payload: [UInt8], expiresAt: Date) async throws -> InboxMessage? {
        let stored = try await enqueue([InboxBroadcast(deviceIDs: [deviceID], msgID: msgID, payload: payload, expiresAt: expiresAt)])
        return stored[0][deviceID].map { InboxMessage(seq: $0, msgID: msgID, payload: payload, expiresAt: expiresAt) }
    }

    /// Stores several messages, each in its devices' inboxes, with one statement: a device
    /// gets its messages under its next sequence numbers, in the order of `broadcasts`, and
    /// its row is updated once for all of them. Returns, per broadcast, device id → seq.
    public func enqueue(_ broadcasts: [InboxBroadcast]) async throws -> [[Int64: Int64]] {
        var deviceIDs: [Int64] = []
        var indices: [Int32] = []
        deviceIDs.reserveCapacity(broadcasts.reduce(0) { $0 + $1.deviceIDs.count })
        indices.reserveCapacity(deviceIDs.capacity)
        for (index, broadcast) in broadcasts.enumerated() {
            deviceIDs += broadcast.deviceIDs
            indices += repeatElement(Int32(index + 1), count: broadcast.deviceIDs.count)
        }
        var seqs = [[Int64: Int64]](repeating: [:], count: broadcasts.count)
        guard !deviceIDs.isEmpty else { return seqs }
        let rows = try await client.query(
            """
            WITH copies AS (
                SELECT DISTINCT c.k::bigint AS k, c.device_id, true AS stored
                FROM unnest(\(deviceIDs)::bigint[], \(indices)::integer[]) AS c(device_id, k)
            ), contents AS (
                SELECT k, msg_id, payload, NULL::bytea AS android_payload, expires_at
                FROM unnest(\(broadcasts.map(\.msgID))::text[], \(broadcasts.map { ByteBuffer(bytes: $0.payload) })::bytea[],
                            \(broadcasts.map(\.expiresAt))::timestamptz[]) WITH ORDINALITY AS c(msg_id, payload, expires_at, k)
            ), \(unescaped: InboxCopies.ctes)
            -- Two arrays per broadcast rather than a row per copy: far less to decode.
            SELECT k, array_agg(device_id), array_agg(seq) FROM numbered GROUP BY k
            """,
            logger: logger
        )
        for try await (k, ids, positions) in rows.decode((Int64, [Int64], [Int64]).self) {
            var stored: [Int64: Int64] = [:]
            stored.reserveCapacity(ids.count)
            for (deviceID, seq) in zip(ids, positions) { stored[deviceID] = seq }
            seqs[Int(k) - 1] = stored
        }
        return seqs
    }

    /// Up to `limit` unacknowledged, unexpired messages of a device after seq `after`,
    /// oldest first, and the seq through which that list is complete: a connection reads
    /// its device's inbox a page at a time, each page after the last.
    ///
    /// Copies that expired before the device came back are marked expired in their
    /// delivery rows and removed from the inbox: they are never sent.
    public func pendingInbox(deviceID: Int64, after: Int64 = 0, limit: Int = 1000, now: Date = Date()) async throws -> InboxSnapshot {
        // herald_inbox_page (migration 0025): the expiry, then the device's latest seq and
        // its messages from one snapshot, planned once per connection.
        let rows = try await client.query(
            "SELECT * FROM herald_inbox_page(\(deviceID), \(after), \(Int64(limit)), \(now))",
            logger: logger
        )
        var messages: [InboxMessage] = []
        var latest: Int64 = 0
        for try await (inboxSeq, seq, msgID, payload, expiresAt, sent) in rows.decode(
            (Int64, Int64?, String?, ByteBuffer?, Date?, Bool?).self
        ) {
            latest = inboxSeq
            guard let seq, let msgID, let payload, let expiresAt else { continue }
            messages.append(
                InboxMessage(seq: seq, msgID: msgID, payload: Array(buffer: payload), expiresAt: expiresAt, wasSent: sent ?? false)
            )
        }
        let complete = messages.count < limit
        return InboxSnapshot(
            messages: messages,
            through: complete ? latest : messages[messages.count - 1].seq,
            isComplete: complete,
            latest: latest
        )
    }

    /// Records, for many devices at once, that each acknowledged its inbox through the seq
    /// in `positions` and was sent it through the seq in `sent` (neither moves back). Only
    /// the gateway's acknowledgements write `device_acks`, in device id order, so two nodes
    /// writing at once don't deadlock, and pushes, which lock devices to number their
    /// inboxes, never wait for it (migration 0006). A device deleted meanwhile gets no row,
    /// nor does one whose session (`epochs`: device id → its connection's epoch) a newer
    /// connection claimed: a node that lost the device changes nothing about it.
    ///
    /// `eventDevices`: devices whose apps record events. For those, the copies the
    /// positions moved over become `sent_tcp` and `acknowledged` events, in the same
    /// statement, if their messages record events and the center hasn't written them (a
    /// copy it is still routing is left to it).
    public func acknowledge(
        _ positions: [Int64: Int64],
        sent: [Int64: Int64] = [:],
        epochs: [Int64: Int64],
        eventDevices: [Int64] = []
    ) async throws {
        guard !positions.isEmpty || !sent.isEmpty else { return }
        let ids = Set(positions.keys).union(sent.keys).sorted()
        let seqs = ids.map { positions[$0] ?? 0 }
        let sentSeqs = ids.map { max(sent[$0] ?? 0, positions[$0] ?? 0) }
        let recorded = eventDevices.filter { positions[$0] != nil || sent[$0] != nil }
        let epochList = ids.map { epochs[$0] ?? 0 }
        guard !recorded.isEmpty else {
            // Fenced: only the connection that holds the device's session writes its positions.
            try await client.query(
                """
                INSERT INTO device_acks (device_id, acked_seq, sent_seq)
                SELECT v.id, v.seq, v.sent
                FROM unnest(\(ids)::bigint[], \(seqs)::bigint[], \(sentSeqs)::bigint[], \(epochList)::bigint[]) AS v(id, seq, sent, epoch)
                WHERE EXISTS (SELECT 1 FROM devices d WHERE d.id = v.id)
                  AND EXISTS (SELECT 1 FROM device_sessions s WHERE s.device_id = v.id AND s.epoch = v.epoch)
                ORDER BY v.id
                ON CONFLICT (device_id) DO UPDATE
                SET acked_seq = GREATEST(device_acks.acked_seq, EXCLUDED.acked_seq), sent_seq = GREATEST(device_acks.sent_seq, EXCLUDED.sent_seq)
                WHERE device_acks.acked_seq < EXCLUDED.acked_seq OR device_acks.sent_seq < EXCLUDED.sent_seq
                """,
                logger: logger
            )
            return
        }
        // The same, and the events of the copies the positions moved over (`old` reads the
        // positions as they were: the statement's own upsert isn't visible to it).
        try await client.query(
            """
            WITH old AS (
                SELECT device_id, acked_seq, sent_seq FROM device_acks WHERE device_id = ANY(\(recorded)::bigint[])
            ), up AS (
                INSERT INTO device_acks (device_id, acked_seq, sent_seq)
                SELECT v.id, v.seq, v.sent
                FROM unnest(\(ids)::bigint[], \(seqs)::bigint[], \(sentSeqs)::bigint[], \(epochList)::bigint[]) AS v(id, seq, sent, epoch)
                WHERE EXISTS (SELECT 1 FROM devices d WHERE d.id = v.id)
                  AND EXISTS (SELECT 1 FROM device_sessions s WHERE s.device_id = v.id AND s.epoch = v.epoch)
                ORDER BY v.id
                ON CONFLICT (device_id) DO UPDATE
                SET acked_seq = GREATEST(device_acks.acked_seq, EXCLUDED.acked_seq), sent_seq = GREATEST(device_acks.sent_seq, EXCLUDED.sent_seq)
                WHERE device_acks.acked_seq < EXCLUDED.acked_seq OR device_acks.sent_seq < EXCLUDED.sent_seq
                RETURNING device_id, acked_seq, sent_seq
            ), moved AS (
                SELECT u.device_id, COALESCE(o.acked_seq, 0) AS a0, u.acked_seq AS a1, COALESCE(o.sent_seq, 0) AS s0, u.sent_seq AS s1
                FROM up u LEFT JOIN old o ON o.device_id = u.device_id WHERE u.device_id = ANY(\(recorded)::bigint[])
            ), copies AS (
                SELECT m.device_id, dm.seq, dm.msg_id, dm.seq > m.s0 AND dm.seq <= m.s1 AS sent, dm.seq > m.a0 AND dm.seq <= m.a1 AS acked
                FROM moved m JOIN device_messages dm
                    ON dm.device_id = m.device_id AND dm.seq > LEAST(m.a0, m.s0) AND dm.seq <= GREATEST(m.a1, m.s1)
            ), new_events AS (
                SELECT ms.app_id, t.type, ms.id AS message_id, ms.msg_id, d.id AS device_id, d.registration_id,
                       jsonb_build_object('channel', 'mqtt', 'inbox_seq', c.seq) AS data
                FROM copies c JOIN messages ms ON ms.msg_id = c.msg_id AND ms.events
                    JOIN deliveries dl ON dl.message_id = ms.id AND dl.device_id = c.device_id AND dl.state <> 'pending'
                    JOIN devices d ON d.id = c.device_id
                    CROSS JOIN LATERAL (VALUES (1, 'sent_tcp', c.sent), (2, 'acknowledged', c.acked),
                                               (3, 'opened', c.acked AND dl.opened_at IS NOT NULL)) AS t(ord, type, happened)
                WHERE t.happened
                  AND NOT EXISTS (SELECT 1 FROM events e WHERE e.message_id = ms.id AND e.device_id = c.device_id AND e.type = t.type)
                ORDER BY c.device_id, c.seq, t.ord
                -- Held shared: a report that the copy was opened, written meanwhile, waits
                -- for this and then finds its events; one written before is read here.
                FOR SHARE OF dl
            ), \(unescaped: EventRows.ctes)
            SELECT count(*) FROM up
            """,
            logger: logger
        )
    }

    /// The device id of a registration id (any app).
    public func device(registrationID: String) async throws -> DeviceIdentity? {
        guard Identifiers.isRegistrationID(registrationID) else { return nil }
        let rows = try await client.query("SELECT id, app_id FROM devices WHERE registration_id = \(registrationID)", logger: logger)
        for try await (deviceID, appID) in rows.decode((Int64, Int64).self) {
            return DeviceIdentity(deviceID: deviceID, appID: appID, registrationID: registrationID)
        }
        return nil
    }
}
