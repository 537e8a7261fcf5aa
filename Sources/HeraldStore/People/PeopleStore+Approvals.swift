import Foundation
import HeraldCore
import PostgresNIO

/// The two-person rule: an app's threshold, and the pushes waiting for a second person.
extension PeopleStore {
    static let approvalColumns =
        """
        p.id, p.app_id, p.body, p.audience_size, p.composer, p.composer_user, p.composed_at,
        CASE WHEN p.state = 'pending' AND p.expires_at <= now() THEN 'expired' ELSE p.state END,
        p.decider, p.decided_at, p.expires_at, p.msg_id
        """

    typealias ApprovalRow = (Int64, Int64, Data, Int64, String, Int64?, Date, String, String?, Date?, Date, String?)

    static func approval(_ row: ApprovalRow) -> PushApproval {
        PushApproval(
            id: row.0,
            appID: row.1,
            body: Array(row.2),
            audienceSize: row.3,
            composer: row.4,
            composerUserID: row.5,
            composedAt: row.6,
            state: PushApproval.State(rawValue: row.7) ?? .pending,
            decider: row.8,
            decidedAt: row.9,
            expiresAt: row.10,
            msgID: row.11
        )
    }

    /// The app's two-person threshold: a person's push to more than this many devices
    /// waits for another's approval; nil: off.
    public func approvalThreshold(appID: Int64) async throws -> Int64? {
        let rows = try await client.query("SELECT approval_threshold FROM apps WHERE id = \(appID)", logger: logger)
        for try await threshold in rows.decode(Int64?.self) { return threshold }
        return nil
    }

    /// Sets (or, nil, turns off) the app's two-person threshold.
    public func setApprovalThreshold(_ threshold: Int64?, appID: Int64) async throws {
        try await client.query("UPDATE apps SET approval_threshold = \(threshold) WHERE id = \(appID)", logger: logger)
    }

    /// Keeps a composed push until another person decides on it, for `lifetime`.
    /// `composer`: as the audit log names them; `composerUserID`: the person's id.
    public func submitForApproval(
        appID: Int64,
        body: [UInt8],
        audienceSize: Int64,
        composer: String,
        composerUserID: Int64?,
        lifetime: Duration
    ) async throws -> PushApproval {
        try await one(
            """
            INSERT INTO push_approvals AS p (app_id, body, audience_size, composer, composer_user, expires_at)
            VALUES (\(appID), \(Data(body)), \(audienceSize), \(composer), \(composerUserID),
                    now() + make_interval(secs => \(Double(lifetime.components.seconds))))
            RETURNING \(unescaped: Self.approvalColumns)
            """
        ) ?? { throw HeraldError(.internalError, "the push was not kept for approval") }()
    }

    /// The app's pushes waiting for approval (or, `all`, decided and expired ones too),
    /// newest first.
    public func approvals(appID: Int64, all: Bool = false, limit: Int = 100) async throws -> [PushApproval] {
        let rows = try await client.query(
            """
            SELECT \(unescaped: Self.approvalColumns) FROM push_approvals p
            WHERE p.app_id = \(appID) AND (\(all) OR (p.state = 'pending' AND p.expires_at > now()))
            ORDER BY p.id DESC LIMIT \(limit)
            """,
            logger: logger
        )
        var approvals: [PushApproval] = []
        for try await row in rows.decode(ApprovalRow.self) { approvals.append(Self.approval(row)) }
        return approvals
    }

    /// One of the app's approvals, or nil.
    public func approval(appID: Int64, id: Int64) async throws -> PushApproval? {
        try await one("SELECT \(unescaped: Self.approvalColumns) FROM push_approvals p WHERE p.app_id = \(appID) AND p.id = \(id)")
    }

    /// Approves a pending push, or takes again one approved but not yet sent (a node that
    /// stopped between the two: it is sent under the same cid, so once). Nil when it is
    /// neither (rejected, expired, sent, or not there).
    public func claimApproval(appID: Int64, id: Int64, by decider: String) async throws -> PushApproval? {
        try await one(
            """
            UPDATE push_approvals p SET state = 'approved', decider = COALESCE(p.decider, \(decider)), decided_at = COALESCE(p.decided_at, now())
            WHERE p.app_id = \(appID) AND p.id = \(id)
              AND ((p.state = 'pending' AND p.expires_at > now()) OR (p.state = 'approved' AND p.msg_id IS NULL))
            RETURNING \(unescaped: Self.approvalColumns)
            """
        )
    }

    /// Records the message an approval sent.
    public func recordSent(appID: Int64, id: Int64, msgID: String) async throws -> PushApproval? {
        try await one(
            """
            UPDATE push_approvals p SET msg_id = \(msgID) WHERE p.app_id = \(appID) AND p.id = \(id)
            RETURNING \(unescaped: Self.approvalColumns)
            """
        )
    }

    /// Rejects a pending push. Nil when it is not pending (decided, expired, not there).
    public func reject(appID: Int64, id: Int64, by decider: String) async throws -> PushApproval? {
        try await one(
            """
            UPDATE push_approvals p SET state = 'rejected', decider = \(decider), decided_at = now()
            WHERE p.app_id = \(appID) AND p.id = \(id) AND p.state = 'pending' AND p.expires_at > now()
            RETURNING \(unescaped: Self.approvalColumns)
            """
        )
    }

    private func one(_ query: PostgresQuery) async throws -> PushApproval? {
        let rows = try await client.query(query, logger: logger)
        for try await row in rows.decode(ApprovalRow.self) { return Self.approval(row) }
        return nil
    }
}
