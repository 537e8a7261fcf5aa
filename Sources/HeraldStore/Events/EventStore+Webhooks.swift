import Foundation
import HeraldCore
import PostgresNIO

extension EventStore {
    static let webhookColumns = """
        w.id, w.url, w.types, w.enabled, w.created_at, (w.cursor_xid::text)::bigint, w.cursor_id, w.delivered, w.last_success_at,
        w.last_failure_at, w.last_failure_status, w.last_failure_error, w.failures, w.retry_at,
        (SELECT count(*) FROM (SELECT 1 FROM events e WHERE e.app_id = w.app_id AND (e.xid, e.id) > (w.cursor_xid, w.cursor_id)
             AND (cardinality(w.types) = 0 OR e.type = ANY(w.types)) LIMIT 100000) AS lagging)
        """

    typealias WebhookRow = (Int64, String, [String], Bool, Date, Int64, Int64, Int64, Date?, Date?, Int32?, String?, Int32, Date?, Int64)

    static func webhook(_ row: WebhookRow) -> Webhook {
        Webhook(
            id: row.0,
            url: row.1,
            types: row.2.compactMap(DeliveryEventType.init(rawValue:)),
            enabled: row.3,
            createdAt: row.4,
            cursor: EventCursor(xid: row.5, id: row.6),
            lag: Int(row.14),
            delivered: row.7,
            lastSuccessAt: row.8,
            lastFailure: row.9.map { Webhook.Failure(status: row.10.map(Int.init), error: row.11, at: $0) },
            consecutiveFailures: Int(row.12),
            retryAt: row.13
        )
    }

    /// What became of a request to add a webhook.
    public enum WebhookCreation: Sendable {
        /// Added, with its secret (shown this once).
        case created(Webhook, secret: String)
        /// No such app.
        case noApp
        /// The app already has ``webhooksPerApp`` webhooks.
        case limitReached
    }

    /// The most webhooks an app may have: each is a sender of its own on some node, and its
    /// events are read again for it.
    public static let webhooksPerApp = 20

    /// Adds a webhook to the app; it gets the events committed from now on. The app's row
    /// is locked while its webhooks are counted, so two requests at once don't both pass
    /// the limit.
    public func createWebhook(appKey: String, url: String, types: [DeliveryEventType]) async throws -> WebhookCreation {
        guard Identifiers.isAppKey(appKey) else { return .noApp }
        let secret = WebhookSignature.newSecret()
        // The secret is sealed with the app key as context, as APNs credentials are.
        let sealed = try sealer.seal(Array(secret.utf8), context: "webhook:" + appKey)
        let creation = try await transaction { connection -> WebhookCreation in
            let apps = try await connection.query(
                """
                SELECT a.id FROM apps a WHERE a.app_key = \(appKey) FOR NO KEY UPDATE
                """,
                logger: logger
            )
            var appID: Int64?
            for try await id in apps.decode(Int64.self) { appID = id }
            guard let appID else { return .noApp }
            let counted = try await connection.query("SELECT count(*) FROM webhooks WHERE app_id = \(appID)", logger: logger)
            for try await count in counted.decode(Int64.self) where count >= Self.webhooksPerApp {
                return .limitReached
            }
            let rows = try await connection.query(
                """
                WITH created AS (
                    INSERT INTO webhooks (app_id, url, types, secret, secret_key, cursor_xid)
                    VALUES (\(appID), \(url), \(types.map(\.rawValue))::text[], \(Data(sealed.combined)), \(sealed.keyID),
                            pg_snapshot_xmin(pg_current_snapshot()))
                    RETURNING *
                )
                SELECT \(unescaped: Self.webhookColumns) FROM created w
                """,
                logger: logger
            )
            for try await row in rows.decode(WebhookRow.self) { return .created(Self.webhook(row), secret: secret) }
            return .noApp
        }
        if case .created = creation { eventApps.invalidate() }
        return creation
    }

    /// The app's webhooks, oldest first.
    public func webhooks(appKey: String) async throws -> [Webhook] {
        let rows = try await client.query(
            """
            SELECT \(unescaped: Self.webhookColumns) FROM webhooks w JOIN apps a ON a.id = w.app_id
            WHERE a.app_key = \(appKey) ORDER BY w.id
            """,
            logger: logger
        )
        var webhooks: [Webhook] = []
        for try await row in rows.decode(WebhookRow.self) { webhooks.append(Self.webhook(row)) }
        return webhooks
    }

    /// One of the app's webhooks.
    public func webhook(appKey: String, id: Int64) async throws -> Webhook? {
        let rows = try await client.query(
            """
            SELECT \(unescaped: Self.webhookColumns) FROM webhooks w JOIN apps a ON a.id = w.app_id
            WHERE a.app_key = \(appKey) AND w.id = \(id)
            """,
            logger: logger
        )
        for try await row in rows.decode(WebhookRow.self) { return Self.webhook(row) }
        return nil
    }

    /// The signing secret of one of the app's webhooks, and its url (for a test request).
    public func webhookSecret(appKey: String, id: Int64) async throws -> (url: String, secret: String)? {
        let rows = try await client.query(
            """
            SELECT w.url, w.secret, w.secret_key FROM webhooks w JOIN apps a ON a.id = w.app_id
            WHERE a.app_key = \(appKey) AND w.id = \(id)
            """,
            logger: logger
        )
        for try await (url, sealed, keyID) in rows.decode((String, Data, String).self) {
            let secret = try sealer.open(SealedSecret(keyID: keyID, combined: Array(sealed)), context: "webhook:" + appKey)
            return (url, String(decoding: secret, as: UTF8.self))
        }
        return nil
    }

    /// Removes one of the app's webhooks (and its failures). False when there was none.
    public func deleteWebhook(appKey: String, id: Int64) async throws -> Bool {
        let deleted = try await client.query(
            "DELETE FROM webhooks w USING apps a WHERE a.id = w.app_id AND a.app_key = \(appKey) AND w.id = \(id) RETURNING w.id",
            logger: logger
        ).count()
        eventApps.invalidate()
        return deleted == 1
    }

    /// The batches one of the app's webhooks gave up on, newest first (at most `limit`).
    /// Nil when there is no such webhook.
    public func webhookFailures(appKey: String, webhookID: Int64, limit: Int = 100) async throws -> [WebhookFailure]? {
        guard try await webhook(appKey: appKey, id: webhookID) != nil else { return nil }
        let rows = try await client.query(
            """
            SELECT id, first_event_id, last_event_id, events, attempts, status, error, first_attempt_at, failed_at
            FROM webhook_failures WHERE webhook_id = \(webhookID) ORDER BY id DESC LIMIT \(Int64(limit))
            """,
            logger: logger
        )
        var failures: [WebhookFailure] = []
        for try await row in rows.decode((Int64, Int64, Int64, Int32, Int32, Int32?, String?, Date?, Date).self) {
            failures.append(
                WebhookFailure(
                    id: row.0,
                    firstEventID: row.1,
                    lastEventID: row.2,
                    events: Int(row.3),
                    attempts: Int(row.4),
                    status: row.5.map(Int.init),
                    error: row.6,
                    firstAttemptAt: row.7,
                    failedAt: row.8
                )
            )
        }
        return failures
    }
}
