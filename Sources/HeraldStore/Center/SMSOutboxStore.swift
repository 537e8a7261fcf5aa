import Foundation
import HeraldCore
import PostgresNIO

/// The SMS fallback's outbox (``CenterStore/sms``): copies not delivered in their window
/// planned as texts, claimed per app with a bound in flight, and their outcomes recorded.
/// The SMS sender reads it through the protocol it declares (`SMSOutbox`, in HeraldSMS).
public struct SMSOutboxStore: StoreFacade {
    let core: StoreCore
}

extension CenterStore {
    /// The SMS fallback's outbox.
    public var sms: SMSOutboxStore { SMSOutboxStore(core: core) }
}

/// An SMS claimed from the outbox (migration 0023), with what decides whether it still goes.
public struct ClaimedSMS: Sendable {
    public var messageID: Int64
    public var deviceID: Int64
    public var appID: Int64
    /// This claim's attempt, from 1.
    public var attempt: Int
    public var msgID: String
    public var registrationID: String
    /// The push's `sms_message`, as stored.
    public var fallback: SMSFallback?
    /// The message was recalled or replaced meanwhile.
    public var isWithdrawn: Bool
    /// The copy reached the device meanwhile (over the connection or through APNs).
    public var isDelivered: Bool
    public var mobile: String?

    /// The key the provider may deduplicate on: the same for every attempt of this SMS.
    public var idempotencyKey: String { "\(msgID):\(registrationID)" }
}

/// What became of a claimed SMS.
public struct SMSUpdate: Sendable {
    public enum State: String, Sendable {
        case pending, sent, failed, cancelled, skipped
    }

    public var messageID: Int64
    public var deviceID: Int64
    public var state: State
    public var error: String?
    /// For `pending`: when to try again.
    public var retryAt: Date?

    public init(messageID: Int64, deviceID: Int64, state: State, error: String? = nil, retryAt: Date? = nil) {
        self.messageID = messageID
        self.deviceID = deviceID
        self.state = state
        self.error = error
        self.retryAt = retryAt
    }
}

/// The SMS outbox (migration 0023): planned once per message when its delay has run out,
/// one row per copy that had not reached its device; claimed with `FOR UPDATE SKIP LOCKED`
/// under a lease, so several nodes share it and a dead node's claims are taken over.
extension SMSOutboxStore {
    /// Plans the SMS of messages whose `sms_message` delay has run out and whose copies
    /// all have an outcome: an outbox row per copy not delivered (nor recalled, replaced,
    /// held or dropped) to a device with a mobile number. Returns the rows written.
    @discardableResult
    public func planDueSMS(limit: Int = 100) async throws -> Int {
        let rows = try await client.query(
            """
            WITH candidates AS (
                SELECT m.id, herald_sms_delay(m.request) AS delay FROM messages m
                WHERE strpos(m.request::text, '"sms_message"') > 0 AND m.sms_planned_at IS NULL
                ORDER BY m.created_at LIMIT \(limit * 10)
            ), due AS (
                -- A request that only mentions "sms_message" (in a text) has no delay: it is
                -- planned with no rows, to leave the index.
                SELECT m.id, m.app_id, c.delay IS NOT NULL AND m.recalled_at IS NULL AND m.superseded_at IS NULL AS live
                FROM candidates c JOIN messages m ON m.id = c.id
                WHERE c.delay IS NULL
                   OR (m.fanned_out_at IS NOT NULL AND m.created_at + make_interval(secs => c.delay) <= now()
                       AND NOT EXISTS (SELECT 1 FROM deliveries p WHERE p.message_id = m.id AND p.state = 'pending'))
                ORDER BY m.created_at LIMIT \(limit)
                FOR UPDATE OF m SKIP LOCKED
            ), planned AS (
                UPDATE messages SET sms_planned_at = now() WHERE id IN (SELECT id FROM due) RETURNING id
            ), written AS (
                INSERT INTO sms_outbox (message_id, device_id, app_id)
                SELECT dl.message_id, dl.device_id, due.app_id
                FROM due JOIN deliveries dl ON dl.message_id = due.id
                JOIN devices d ON d.id = dl.device_id
                LEFT JOIN device_acks a ON a.device_id = dl.device_id
                WHERE due.live AND (d.mobile IS NOT NULL OR d.mobile_sealed IS NOT NULL) AND dl.state IN ('waiting', 'failed', 'expired')
                  AND NOT (dl.inbox_seq IS NOT NULL AND dl.inbox_seq <= COALESCE(a.acked_seq, 0))
                ON CONFLICT DO NOTHING
                RETURNING 1
            )
            SELECT (SELECT count(*) FROM planned), (SELECT count(*) FROM written)
            """,
            logger: logger
        )
        for try await (_, written) in rows.decode((Int64, Int64).self) { return Int(written) }
        return 0
    }

    /// Claims up to `limit` SMS due (pending, or sending under a lease that ran out) for
    /// `lease`, each with the state of its message and copy read in the same statement.
    /// Each app gets at most `perApp` in flight, counting the `inFlight` it has already: the
    /// oldest due SMS of each app with SMS waiting (found by a walk of the apps' index),
    /// then the oldest of those. So an app whose provider hangs, with any backlog, holds
    /// `perApp` of the sender and the others go on.
    public func claimSMS(limit: Int, perApp: Int, inFlight: [Int64: Int] = [:], lease: Duration) async throws -> [ClaimedSMS] {
        let busyApps = Array(inFlight.keys)
        let busyCounts = busyApps.map { Int64(inFlight[$0]!) }
        let rows = try await client.query(
            """
            WITH RECURSIVE waiting AS (
                (SELECT app_id FROM sms_outbox WHERE state IN ('pending', 'sending') ORDER BY app_id LIMIT 1)
                UNION ALL
                SELECT (SELECT o.app_id FROM sms_outbox o
                        WHERE o.state IN ('pending', 'sending') AND o.app_id > w.app_id ORDER BY o.app_id LIMIT 1)
                FROM waiting w WHERE w.app_id IS NOT NULL
            ), busy AS (
                SELECT * FROM unnest(\(busyApps)::bigint[], \(busyCounts)::bigint[]) AS b(app_id, in_flight)
            ), claimable AS (
                SELECT x.message_id, x.device_id FROM waiting w
                CROSS JOIN LATERAL (
                    SELECT o.message_id, o.device_id, o.next_attempt_at FROM sms_outbox o
                    WHERE o.app_id = w.app_id AND o.state IN ('pending', 'sending') AND o.next_attempt_at <= now()
                    ORDER BY o.next_attempt_at
                    LIMIT greatest(0, \(perApp) - COALESCE((SELECT b.in_flight FROM busy b WHERE b.app_id = w.app_id), 0))
                    FOR UPDATE OF o SKIP LOCKED
                ) x
                WHERE w.app_id IS NOT NULL
                ORDER BY x.next_attempt_at LIMIT \(limit)
            ), claimed AS (
                UPDATE sms_outbox o SET state = 'sending', attempts = o.attempts + 1,
                    next_attempt_at = now() + make_interval(secs => \(Double(lease.components.seconds)))
                FROM claimable c WHERE o.message_id = c.message_id AND o.device_id = c.device_id
                RETURNING o.message_id, o.device_id, o.app_id, o.attempts
            )
            SELECT c.message_id, c.device_id, c.app_id, c.attempts, m.msg_id, d.registration_id, herald_sms_message(m.request),
                m.recalled_at IS NOT NULL OR m.superseded_at IS NOT NULL,
                dl.state IN \(unescaped: DeliveredCopy.states) OR (dl.inbox_seq IS NOT NULL AND dl.inbox_seq <= COALESCE(a.acked_seq, 0)
                                                AND dl.state NOT IN ('recalled', 'replaced', 'expired')),
                d.mobile, d.mobile_sealed, d.mobile_key
            FROM claimed c JOIN messages m ON m.id = c.message_id JOIN devices d ON d.id = c.device_id
            LEFT JOIN deliveries dl ON dl.message_id = c.message_id AND dl.device_id = c.device_id
            LEFT JOIN device_acks a ON a.device_id = c.device_id
            """,
            logger: logger
        )
        var claimed: [ClaimedSMS] = []
        for try await row in rows {
            let columns = row.makeRandomAccess()
            let json = try columns[6].decode(String?.self)
            let fallback = json.flatMap { try? JSONDecoder().decode(SMSMessage.self, from: Data($0.utf8)) }?.fallback
            claimed.append(
                ClaimedSMS(
                    messageID: try columns[0].decode(Int64.self),
                    deviceID: try columns[1].decode(Int64.self),
                    appID: try columns[2].decode(Int64.self),
                    attempt: Int(try columns[3].decode(Int32.self)),
                    msgID: try columns[4].decode(String.self),
                    registrationID: try columns[5].decode(String.self),
                    fallback: fallback,
                    isWithdrawn: try columns[7].decode(Bool.self),
                    isDelivered: try columns[8].decode(Bool?.self) ?? false,
                    mobile: try columns[9].decode(String?.self)
                        ?? (try? MobileSealing.open(
                            try columns[10].decode(Data?.self),
                            keyID: try columns[11].decode(String?.self),
                            appID: try columns[2].decode(Int64.self),
                            sealer: sealer
                        )) ?? nil
                )
            )
        }
        return claimed
    }

    /// Records what became of claimed SMS; a row no longer `sending` (taken over meanwhile)
    /// is left as it is.
    public func finishSMS(_ updates: [SMSUpdate]) async throws {
        guard !updates.isEmpty else { return }
        try await client.query(
            """
            UPDATE sms_outbox o SET state = u.state, error = NULLIF(u.error, ''),
                sent_at = CASE WHEN u.state = 'sent' THEN now() ELSE o.sent_at END,
                next_attempt_at = CASE WHEN u.state = 'pending' THEN u.retry_at ELSE o.next_attempt_at END
            FROM unnest(\(updates.map(\.messageID))::bigint[], \(updates.map(\.deviceID))::bigint[],
                        \(updates.map(\.state.rawValue))::text[], \(updates.map { $0.error ?? "" })::text[],
                        \(updates.map { $0.retryAt ?? Date(timeIntervalSince1970: 0) })::timestamptz[])
                AS u(message_id, device_id, state, error, retry_at)
            WHERE o.message_id = u.message_id AND o.device_id = u.device_id AND o.state = 'sending'
            """,
            logger: logger
        )
    }
}

extension SMSOutboxStore {
    /// The HTTP SMS providers of those of `appIDs` that have one, unsealed.
    public func smsProviders(appIDs: [Int64]) async throws -> [Int64: SMSHTTPProviderConfiguration] {
        guard !appIDs.isEmpty else { return [:] }
        let rows = try await client.query(
            """
            SELECT id, app_key, sms_provider, sms_provider_key FROM apps WHERE id = ANY(\(appIDs)) AND sms_provider IS NOT NULL
            """,
            logger: logger
        )
        var providers: [Int64: SMSHTTPProviderConfiguration] = [:]
        for try await (id, appKey, combined, keyID) in rows.decode((Int64, String, Data, String).self) {
            let plaintext = try sealer.open(SealedSecret(keyID: keyID, combined: Array(combined)), context: "sms:" + appKey)
            providers[id] = try JSONDecoder().decode(SMSHTTPProviderConfiguration.self, from: Data(plaintext))
        }
        return providers
    }
}
