import Foundation
import HeraldCore
import PostgresNIO

/// The two-person rule: an app's threshold, and the pushes waiting for a second person.
extension PeopleStore {
    static let approvalColumns =
        """
        p.id, p.app_id, p.body, p.audience_size, c.email, p.composed_at,
        CASE WHEN p.state = 'pending' AND p.expires_at <= now() THEN 'expired' ELSE p.state END,
        d.email, p.decided_at, p.expires_at, p.msg_id
        """

    static let approvalJoins = "FROM push_approvals p JOIN users c ON c.id = p.composed_by LEFT JOIN users d ON d.id = p.decided_by"

    typealias ApprovalRow = (Int64, Int64, Data, Int64, String, Date, String, String?, Date?, Date, String?)

    static func approval(_ row: ApprovalRow) -> PushApproval {
        PushApproval(
            id: row.0,
            appID: row.1,
            body: Array(row.2),
            audienceSize: row.3,
            composedBy: row.4,
            composedAt: row.5,
            state: PushApproval.State(rawValue: row.6) ?? .pending,
            decidedBy: row.7,
            decidedAt: row.8,
            expiresAt: row.9,
            msgID: row.10
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
    public func submitForApproval(
        appID: Int64,
        body: [UInt8],
        audienceSize: Int64,
        composedBy userID: Int64,
        lifetime: Duration
    ) async throws -> PushApproval {
        let rows = try await client.query(
            """
            WITH p AS (
                INSERT INTO push_approvals (app_id, body, audience_size, composed_by, expires_at)
                VALUES (\(appID), \(Data(body)), \(audienceSize), \(userID), now() + make_interval(secs => \(Double(lifetime.components.seconds))))
                RETURNING *
            )
            SELECT \(unescaped: Self.approvalColumns) \(unescaped: Self.approvalJoins.replacingOccurrences(of: "FROM push_approvals p", with: "FROM p"))
            """,
            logger: logger
        )
        for try await row in rows.decode(ApprovalRow.self) { return Self.approval(row) }
        throw HeraldError(.internalError, "the push was not kept for approval")
    }

    /// The app's pushes waiting for approval (or, `all`, decided ones too), newest first.
    public func approvals(appID: Int64, all: Bool = false, limit: Int = 100) async throws -> [PushApproval] {
        let rows = try await client.query(
            """
            SELECT \(unescaped: Self.approvalColumns) \(unescaped: Self.approvalJoins)
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
        let rows = try await client.query(
            "SELECT \(unescaped: Self.approvalColumns) \(unescaped: Self.approvalJoins) WHERE p.app_id = \(appID) AND p.id = \(id)",
            logger: logger
        )
        for try await row in rows.decode(ApprovalRow.self) { return Self.approval(row) }
        return nil
    }

    /// Records the decision on a pending approval (`msgID`: the message the approval
    /// sent). Nil when it is no longer pending (decided by someone else meanwhile, or
    /// expired): nothing changes.
    public func decide(appID: Int64, id: Int64, approved: Bool, by userID: Int64, msgID: String?) async throws -> PushApproval? {
        let rows = try await client.query(
            """
            WITH p AS (
                UPDATE push_approvals SET state = \(approved ? "approved" : "rejected"), decided_by = \(userID), decided_at = now(),
                    msg_id = \(msgID)
                WHERE app_id = \(appID) AND id = \(id) AND state = 'pending' AND expires_at > now()
                RETURNING *
            )
            SELECT \(unescaped: Self.approvalColumns) \(unescaped: Self.approvalJoins.replacingOccurrences(of: "FROM push_approvals p", with: "FROM p"))
            """,
            logger: logger
        )
        for try await row in rows.decode(ApprovalRow.self) { return Self.approval(row) }
        return nil
    }
}
