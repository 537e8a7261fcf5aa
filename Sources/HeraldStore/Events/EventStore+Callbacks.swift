import Foundation
import HeraldCore
import PostgresNIO

/// A JPush callback request claimed by this node's callback worker.
public struct CallbackRequest: Sendable, Hashable {
    public var id: Int64
    public var url: String
    public var body: String
    /// Failed attempts so far.
    public var attempts: Int
    public var createdAt: Date
}

extension EventStore {
    /// Claims up to `limit` callback requests that are due, pushing their next attempt
    /// `lease` into the future so no other node sends them meanwhile.
    public func claimCallbacks(limit: Int, lease: Duration) async throws -> [CallbackRequest] {
        let rows = try await client.query(
            """
            WITH due AS (
                SELECT id FROM callback_outbox WHERE failed_at IS NULL AND next_attempt_at <= now()
                ORDER BY next_attempt_at, id LIMIT \(Int64(limit)) FOR UPDATE SKIP LOCKED
            )
            UPDATE callback_outbox c SET next_attempt_at = now() + make_interval(secs => \(lease.timeInterval))
            FROM due WHERE c.id = due.id
            RETURNING c.id, c.url, c.body, c.attempts, c.created_at
            """,
            logger: logger
        )
        var requests: [CallbackRequest] = []
        for try await (id, url, body, attempts, createdAt) in rows.decode((Int64, String, String, Int32, Date).self) {
            requests.append(CallbackRequest(id: id, url: url, body: body, attempts: Int(attempts), createdAt: createdAt))
        }
        return requests.sorted { $0.id < $1.id }
    }

    /// The receivers answered 2xx: the requests are done.
    public func callbacksDelivered(_ ids: [Int64]) async throws {
        guard !ids.isEmpty else { return }
        try await client.query("DELETE FROM callback_outbox WHERE id = ANY(\(ids))", logger: logger)
    }

    /// A request failed: tried again at `retryAt`, or kept as failed (`giveUp`).
    public func callbackFailed(id: Int64, status: Int?, error: String, retryAt: Date, giveUp: Bool) async throws {
        try await client.query(
            """
            UPDATE callback_outbox SET attempts = attempts + 1, next_attempt_at = \(retryAt), last_status = \(status.map(Int32.init)),
                last_error = \(error), failed_at = CASE WHEN \(giveUp) THEN now() END
            WHERE id = \(id)
            """,
            logger: logger
        )
    }
}
