import Foundation
import HeraldCore
import PostgresNIO

extension EventStore {
    /// Claims up to `limit` enabled webhooks no node holds, with events to read, whose retry
    /// (if failing) is due, for `lease`: one node at a time sends to a webhook, so its events
    /// go in order. Those that have waited longest come first (since their retry time, or
    /// since they were last given back; migration 0027), so every endpoint gets its turn
    /// however many there are.
    ///
    /// A webhook leased to `node` itself that it is not sending to (`sending`) is claimed
    /// again too: its lease outlived the send that took it, as when PostgreSQL went away
    /// before the webhook could be given back, and waiting for the lease would stop it for
    /// that long.
    public func claimWebhooks(node: String, lease: Duration, limit: Int, sending: [Int64] = []) async throws -> [ClaimedWebhook] {
        let rows = try await client.query(
            """
            WITH due AS (
                SELECT w.id FROM webhooks w
                WHERE w.enabled AND (w.retry_at IS NULL OR w.retry_at <= now())
                  AND (w.leased_until IS NULL OR w.leased_until < now() OR (w.leased_by = \(node) AND w.id <> ALL(\(sending)::bigint[])))
                  AND EXISTS (
                      SELECT 1 FROM events e
                      WHERE e.app_id = w.app_id AND (e.xid, e.id) > (w.cursor_xid, w.cursor_id)
                        AND e.xid < pg_snapshot_xmin(pg_current_snapshot())
                  )
                ORDER BY COALESCE(w.retry_at, w.released_at, '-infinity'), w.id LIMIT \(Int64(limit)) FOR UPDATE OF w SKIP LOCKED
            ), claimed AS (
                UPDATE webhooks w SET leased_by = \(node), leased_until = now() + make_interval(secs => \(lease.timeInterval))
                FROM due WHERE w.id = due.id
                RETURNING w.*
            )
            SELECT c.id, c.app_id, a.app_key, c.url, c.types, c.secret, c.secret_key, (c.cursor_xid::text)::bigint, c.cursor_id,
                   c.failures, c.failing_since
            FROM claimed c JOIN apps a ON a.id = c.app_id
            """,
            logger: logger
        )
        var claimed: [ClaimedWebhook] = []
        for try await row in rows.decode((Int64, Int64, String, String, [String], Data, String, Int64, Int64, Int32, Date?).self) {
            let secret = try sealer.open(SealedSecret(keyID: row.6, combined: Array(row.5)), context: "webhook:" + row.2)
            claimed.append(
                ClaimedWebhook(
                    id: row.0,
                    appID: row.1,
                    url: row.3,
                    types: row.4.compactMap(DeliveryEventType.init(rawValue:)),
                    secret: String(decoding: secret, as: UTF8.self),
                    cursor: EventCursor(xid: row.7, id: row.8),
                    failures: Int(row.9),
                    failingSince: row.10
                )
            )
        }
        return claimed
    }

    /// Extends this node's lease on a webhook; false when it no longer holds it.
    public func renewWebhook(id: Int64, node: String, lease: Duration) async throws -> Bool {
        try await client.query(
            """
            UPDATE webhooks SET leased_until = now() + make_interval(secs => \(lease.timeInterval))
            WHERE id = \(id) AND leased_by = \(node) RETURNING id
            """,
            logger: logger
        ).count() == 1
    }

    /// The webhook's receiver took `count` events (2xx) up to `cursor`, or there were none
    /// to send up to it: the cursor moves, failures are cleared. False when this node no
    /// longer held it (nothing changes).
    public func webhookAdvanced(id: Int64, node: String, to cursor: EventCursor, delivered count: Int) async throws -> Bool {
        try await client.query(
            """
            UPDATE webhooks SET cursor_xid = \(String(cursor.xid))::xid8, cursor_id = \(cursor.id), delivered = delivered + \(Int64(count)),
                last_success_at = CASE WHEN \(Int64(count)) > 0 THEN now() ELSE last_success_at END,
                failures = 0, failing_since = NULL, retry_at = NULL
            WHERE id = \(id) AND leased_by = \(node) RETURNING id
            """,
            logger: logger
        ).count() == 1
    }

    /// A request to the webhook failed (`status`: the HTTP status, nil without an answer):
    /// it is tried again at `retryAt`, and its lease is released.
    public func webhookFailed(id: Int64, node: String, status: Int?, error: String, retryAt: Date) async throws {
        try await client.query(
            """
            UPDATE webhooks SET failures = failures + 1, failing_since = COALESCE(failing_since, now()), retry_at = \(retryAt),
                last_failure_at = now(), last_failure_status = \(status.map(Int32.init)), last_failure_error = \(error),
                leased_by = NULL, leased_until = NULL, released_at = now()
            WHERE id = \(id) AND leased_by = \(node)
            """,
            logger: logger
        )
    }

    /// The webhook's batch failed for longer than it may be retried: it is recorded in
    /// `webhook_failures`, and the cursor moves past it, in one transaction.
    public func webhookGaveUp(
        id: Int64,
        node: String,
        events: [DeliveryEvent],
        status: Int?,
        error: String
    ) async throws {
        guard let first = events.first, let last = events.last else { return }
        try await transaction { connection in
            let rows = try await connection.query(
                """
                UPDATE webhooks SET cursor_xid = \(String(last.cursor.xid))::xid8, cursor_id = \(last.cursor.id),
                    failures = 0, failing_since = NULL, retry_at = NULL,
                    last_failure_at = now(), last_failure_status = \(status.map(Int32.init)), last_failure_error = \(error)
                WHERE id = \(id) AND leased_by = \(node)
                RETURNING (SELECT failures FROM webhooks WHERE id = \(id)), (SELECT failing_since FROM webhooks WHERE id = \(id))
                """,
                logger: logger
            )
            for try await (attempts, since) in rows.decode((Int32, Date?).self) {
                try await connection.query(
                    """
                    INSERT INTO webhook_failures (webhook_id, first_event_id, last_event_id, events, attempts, status, error, first_attempt_at)
                    VALUES (\(id), \(first.id), \(last.id), \(Int32(events.count)), \(attempts + 1), \(status.map(Int32.init)), \(error), \(since))
                    """,
                    logger: logger
                )
            }
        }
    }

    /// Gives the webhook back (this node stops sending to it for now).
    public func releaseWebhook(id: Int64, node: String) async throws {
        try await client.query(
            "UPDATE webhooks SET leased_by = NULL, leased_until = NULL, released_at = now() WHERE id = \(id) AND leased_by = \(node)",
            logger: logger
        )
    }
}
