import Foundation
import HeraldCore
import PostgresNIO

/// The audit log, on the durable pool (``APIStore/audit``).
public struct AuditStore: StoreFacade {
    let core: StoreCore
}

extension APIStore {
    /// The audit log, on the durable pool.
    public var audit: AuditStore { AuditStore(core: core) }
}

/// The audit log (migration 0034): appended in batches that chain on the last entry, read
/// by app, actor, action and time, and verified.
extension AuditStore {
    /// Appends `entries`, in order, to the chain, after the entries written in pushes'
    /// commits meanwhile (``sealPendingAudit()``): one transaction, which holds the log's
    /// lock from reading the last hash to its commit, so the nodes' appends never fork it.
    public func append(_ entries: [AuditEntry]) async throws {
        try await transaction { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.auditLock))", logger: logger)
            let pending = try await Self.takePending(on: connection, logger: logger)
            try await Self.chain(pending + entries, on: connection, logger: logger)
        }
    }

    /// Moves the entries written in pushes' commits (`audit_pending`, migration 0036) into
    /// the chain, in the order they were written. Returns how many it moved.
    @discardableResult
    public func sealPending() async throws -> Int {
        // Nothing pending (nearly always, between pushes): no lock taken.
        let any = try await client.query("SELECT 1 FROM audit_pending LIMIT 1", logger: logger)
        guard try await any.count() > 0 else { return 0 }
        return try await transaction { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.auditLock))", logger: logger)
            let pending = try await Self.takePending(on: connection, logger: logger)
            try await Self.chain(pending, on: connection, logger: logger)
            return pending.count
        }
    }

    /// Writes entries to be chained later, inside the caller's transaction (a push's).
    static func appendPendingAudit(_ entries: [AuditEntry], on connection: PostgresConnection, logger: Logger) async throws {
        for entry in entries {
            try await connection.query(
                """
                INSERT INTO audit_pending (at_us, app_id, actor, action, target, status, address, request_id, body_digest)
                VALUES (\(entry.atMicroseconds), \(entry.appID), \(entry.actor), \(entry.action), \(entry.target),
                        \(Int32(clamping: entry.status)), \(entry.address), \(entry.requestID), \(entry.bodyDigest))
                """,
                logger: logger
            )
        }
    }

    /// Removes the pending entries (under the log's lock), oldest first.
    private static func takePending(on connection: PostgresConnection, logger: Logger) async throws -> [AuditEntry] {
        let rows = try await connection.query(
            """
            WITH taken AS (DELETE FROM audit_pending RETURNING *)
            SELECT id, at_us, app_id, actor, action, target, status, address, request_id, body_digest, ''::bytea FROM taken ORDER BY id
            """,
            logger: logger
        )
        var entries: [AuditEntry] = []
        for try await row in rows { entries.append(try auditRow(row.makeRandomAccess()).entry) }
        return entries
    }

    /// Chains `entries` after the last one, under the log's lock the caller holds.
    private static func chain(_ entries: [AuditEntry], on connection: PostgresConnection, logger: Logger) async throws {
        guard !entries.isEmpty else { return }
        let last = try await connection.query("SELECT hash FROM audit_log ORDER BY id DESC LIMIT 1", logger: logger)
        var previous = AuditChain.genesis
        for try await hash in last.decode(Data.self) { previous = Array(hash) }
        var hashes: [String] = []
        for entry in entries {
            previous = AuditChain.hash(previous: previous, entry)
            hashes.append(Hex.encode(previous))
        }
        try await connection.query(
            """
            INSERT INTO audit_log (at_us, app_id, actor, action, target, status, address, request_id, body_digest, hash)
            SELECT at_us, NULLIF(app_id, 0), actor, action, target, status, NULLIF(address, ''), NULLIF(request_id, ''),
                   NULLIF(body_digest, ''), decode(hash, 'hex')
            FROM unnest(\(entries.map(\.atMicroseconds))::bigint[], \(entries.map { $0.appID ?? 0 })::bigint[],
                                 \(entries.map(\.actor))::text[], \(entries.map(\.action))::text[], \(entries.map(\.target))::text[],
                                 \(entries.map { Int32(clamping: $0.status) })::integer[], \(entries.map { $0.address ?? "" })::text[],
                                 \(entries.map { $0.requestID ?? "" })::text[], \(entries.map { $0.bodyDigest ?? "" })::text[],
                                 \(hashes)::text[])
                WITH ORDINALITY AS e(at_us, app_id, actor, action, target, status, address, request_id, body_digest, hash, n)
            ORDER BY n
            """,
            logger: logger
        )
    }

    /// Entries after `afterID`, oldest first: the app's (nil: every app's and the
    /// instance's), by an actor, an action, since and until a time.
    public func entries(
        appID: Int64?,
        actor: String? = nil,
        action: String? = nil,
        since: Date? = nil,
        until: Date? = nil,
        afterID: Int64 = 0,
        limit: Int = 100
    ) async throws -> [StoredAuditEntry] {
        // What pushes committed is read as every other entry: chained first.
        try await sealPending()
        let sinceUS = since.map { Int64($0.timeIntervalSince1970 * 1_000_000) }
        let untilUS = until.map { Int64($0.timeIntervalSince1970 * 1_000_000) }
        let rows = try await client.query(
            """
            SELECT \(unescaped: Self.auditColumns), a.app_key FROM audit_log l LEFT JOIN apps a ON a.id = l.app_id
            WHERE l.id > \(afterID) AND (\(appID)::bigint IS NULL OR l.app_id = \(appID))
              AND (\(actor)::text IS NULL OR l.actor = \(actor)) AND (\(action)::text IS NULL OR l.action = \(action))
              AND (\(sinceUS)::bigint IS NULL OR l.at_us >= \(sinceUS)) AND (\(untilUS)::bigint IS NULL OR l.at_us < \(untilUS))
            ORDER BY l.id LIMIT \(limit)
            """,
            logger: logger
        )
        var entries: [StoredAuditEntry] = []
        for try await row in rows {
            let columns = row.makeRandomAccess()
            var stored = try Self.auditRow(columns)
            stored.appKey = try columns[11].decode(String?.self)
            entries.append(stored)
        }
        return entries
    }

    /// Walks the whole chain, `batch` entries at a time: how many entries it checked, and
    /// the id of the first whose hash is not its chain's (altered, or after a removed one).
    public func verify(batch: Int = 5_000) async throws -> (checked: Int, firstBroken: Int64?) {
        try await sealPending()
        var previous = AuditChain.genesis
        var afterID: Int64 = 0
        var checked = 0
        while true {
            let rows = try await client.query(
                "SELECT \(unescaped: Self.auditColumns) FROM audit_log l WHERE l.id > \(afterID) ORDER BY l.id LIMIT \(batch)",
                logger: logger
            )
            var entries: [StoredAuditEntry] = []
            for try await row in rows { entries.append(try Self.auditRow(row.makeRandomAccess())) }
            guard let last = entries.last else { return (checked, nil) }
            if let broken = AuditChain.firstBroken(entries, previous: previous) {
                return (checked + entries.prefix { $0.id != broken }.count, broken)
            }
            checked += entries.count
            previous = last.hash
            afterID = last.id
        }
    }

    /// The advisory lock of the log's appends.
    static let auditLock: Int64 = 0x4845_5241_4C44_4155  // "HERALDAU"

    static let auditColumns =
        "l.id, l.at_us, l.app_id, l.actor, l.action, l.target, l.status, l.address, l.request_id, l.body_digest, l.hash"

    static func auditRow(_ row: PostgresRandomAccessRow) throws -> StoredAuditEntry {
        var entry = AuditEntry(
            appID: try row[2].decode(Int64?.self),
            actor: try row[3].decode(String.self),
            action: try row[4].decode(String.self),
            target: try row[5].decode(String.self),
            status: Int(try row[6].decode(Int32.self)),
            address: try row[7].decode(String?.self),
            requestID: try row[8].decode(String?.self),
            bodyDigest: try row[9].decode(String?.self)
        )
        entry.atMicroseconds = try row[1].decode(Int64.self)
        return StoredAuditEntry(id: try row[0].decode(Int64.self), entry: entry, hash: Array(try row[10].decode(Data.self)))
    }
}
