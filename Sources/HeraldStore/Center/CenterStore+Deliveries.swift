import Foundation
import HeraldCore
import PostgresNIO

/// What became of one copy, to be recorded.
public struct DeliveryUpdate: Sendable, Hashable {
    public enum State: String, Sendable, Hashable {
        case tcp, apns, fcm, waiting, failed, expired
    }

    public var deviceID: Int64
    public var state: State
    public var apnsReason: String?
    /// When an APNs retry is due.
    public var retryAt: Date?
    /// APNs was tried once more.
    public var apnsAttempted: Bool
    /// What the copy's events add, when its message records events (nil: none recorded).
    public var event: EventDetail?

    /// What the events of a copy's outcome carry beyond its state.
    public struct EventDetail: Sendable, Hashable {
        /// APNs' apns-id and HTTP status, when APNs answered.
        public var apnsID: UUID?
        public var apnsStatus: Int?
        /// The copy went out over the MQTT connection (acknowledged or not).
        public var sentOverTCP: Bool
        /// The channel that took or refused it, when not APNs (`fcm`).
        public var channel: String?

        public init(apnsID: UUID? = nil, apnsStatus: Int? = nil, sentOverTCP: Bool = false, channel: String? = nil) {
            self.apnsID = apnsID
            self.apnsStatus = apnsStatus
            self.sentOverTCP = sentOverTCP
            self.channel = channel
        }

        /// As the record function reads it (`p_event_data`).
        var json: String {
            var writer = JSONObjectWriter(capacity: 96)
            writer.field("apns_id", apnsID?.uuidString.lowercased())
            writer.field("apns_status", apnsStatus)
            writer.field("sent_tcp", sentOverTCP ? true : nil)
            writer.field("channel", channel)
            return String(decoding: writer.finish(), as: UTF8.self)
        }
    }

    public init(
        deviceID: Int64,
        state: State,
        apnsReason: String? = nil,
        retryAt: Date? = nil,
        apnsAttempted: Bool = false,
        event: EventDetail? = nil
    ) {
        self.deviceID = deviceID
        self.state = state
        self.apnsReason = apnsReason
        self.retryAt = retryAt
        self.apnsAttempted = apnsAttempted
        self.event = event
    }
}

/// A delivery whose APNs retry is due.
public struct DueRetry: Sendable, Hashable {
    public var messageID: Int64
    public var attempts: Int
    public var target: FanOutTarget
}

extension CenterStore {
    /// Records the outcomes of routed copies in one statement. A copy recalled or replaced
    /// meanwhile keeps that state.
    public func recordDeliveries(messageID: Int64, _ updates: [DeliveryUpdate]) async throws {
        try await recordDeliveries([(messageID, updates)])
    }

    /// Claims up to `limit` deliveries whose APNs retry is due, pushing their next attempt
    /// `lease` into the future so no other worker takes them meanwhile.
    public func claimDueRetries(limit: Int, lease: Duration) async throws -> [DueRetry] {
        let rows = try await client.query(
            """
            WITH due AS (
                SELECT message_id, device_id FROM deliveries
                WHERE next_attempt_at <= now() AND state = 'waiting'
                ORDER BY next_attempt_at LIMIT \(Int64(limit)) FOR UPDATE SKIP LOCKED
            ), claimed AS (
                UPDATE deliveries dl SET next_attempt_at = now() + make_interval(secs => \(Double(lease.components.seconds)))
                FROM due WHERE dl.message_id = due.message_id AND dl.device_id = due.device_id
                RETURNING dl.message_id, dl.device_id, dl.apns_attempts, dl.inbox_seq
            )
            SELECT c.message_id, c.apns_attempts, \(unescaped: FanOutTarget.columns), c.inbox_seq, d.badge
            FROM claimed c JOIN devices d ON d.id = c.device_id
            """,
            logger: logger
        )
        var retries: [DueRetry] = []
        for try await row in rows {
            let cells = row.makeRandomAccess()
            guard let target = try FanOutTarget(cells, at: 2) else { continue }
            retries.append(DueRetry(messageID: try cells[0].decode(Int64.self), attempts: Int(try cells[1].decode(Int32.self)), target: target))
        }
        return retries
    }

    /// APNs said a token is no longer valid. With a timestamp (Unregistered), a device
    /// that registered its token again after that moment stays valid. `voip`: the token is
    /// the device's VoIP token, which is removed (the device's APNs token stays valid);
    /// otherwise the device's tokens are marked invalid, since APNs' timestamp (when APNs
    /// gave one, else now). `event`: the message whose send found it out, when that message
    /// records events (a `token_invalidated` event is written in the same statement).
    public func invalidateToken(
        deviceID: Int64,
        token: String,
        since: Date?,
        voip: Bool = false,
        event: (messageID: Int64, reason: String)? = nil
    ) async throws {
        // An ActivityKit token APNs no longer takes goes (migration 0023), whether or not
        // the message records events.
        try await client.query(
            """
            DELETE FROM live_activity_tokens WHERE device_id = \(deviceID) AND token = \(token)
              AND (\(since)::timestamptz IS NULL OR updated_at <= \(since)::timestamptz)
            """,
            logger: logger
        )
        guard let event else {
            try await client.query(
                """
                UPDATE devices SET voip_token = CASE WHEN \(voip) THEN NULL ELSE voip_token END,
                    token_valid = token_valid AND \(voip),
                    token_invalidated_at = CASE WHEN \(voip) THEN token_invalidated_at ELSE COALESCE(\(since)::timestamptz, now()) END
                WHERE id = \(deviceID) AND (voip_token = \(token) OR (NOT \(voip) AND apns_token = \(token)))
                  AND (\(since)::timestamptz IS NULL OR updated_at <= \(since)::timestamptz)
                """,
                logger: logger
            )
            return
        }
        try await client.query(
            """
            WITH invalidated AS (
                UPDATE devices SET voip_token = CASE WHEN \(voip) THEN NULL ELSE voip_token END,
                    token_valid = token_valid AND \(voip),
                    token_invalidated_at = CASE WHEN \(voip) THEN token_invalidated_at ELSE COALESCE(\(since)::timestamptz, now()) END
                WHERE id = \(deviceID) AND (voip_token = \(token) OR (NOT \(voip) AND apns_token = \(token)))
                  AND (\(since)::timestamptz IS NULL OR updated_at <= \(since)::timestamptz)
                RETURNING id, app_id, registration_id, apns_token IS NOT DISTINCT FROM \(token) AS primary_token
            )
            INSERT INTO events (app_id, type, message_id, msg_id, device_id, registration_id, data)
            SELECT i.app_id, 'token_invalidated', m.id, m.msg_id, i.id, i.registration_id,
                   jsonb_build_object('reason', \(event.reason)::text, 'token', CASE WHEN i.primary_token THEN 'apns' ELSE 'voip' END)
            FROM invalidated i JOIN messages m ON m.id = \(event.messageID)
            """,
            logger: logger
        )
    }

    /// APNs refused the app's credentials: nothing goes to APNs for the app until new
    /// credentials are uploaded (which clears the mark).
    public func markAPNsCredentialsBroken(appID: Int64, reason: String) async throws {
        try await client.query(
            "UPDATE apps SET apns_broken_reason = \(reason), apns_broken_at = now() WHERE id = \(appID) AND apns_broken_reason IS NULL",
            logger: logger
        )
    }

    /// An app's APNs credentials for the provider, with when they changed and whether APNs
    /// refused them.
    public func apnsCredentials(appID: Int64) async throws -> (credentials: APNsCredentials, updatedAt: Date, brokenReason: String?)? {
        let rows = try await client.query(
            """
            SELECT app_key, apns_credentials, apns_credentials_key, apns_updated_at, apns_broken_reason FROM apps
            WHERE id = \(appID) AND apns_credentials IS NOT NULL
            """,
            logger: logger
        )
        for try await (appKey, combined, keyID, updatedAt, broken) in rows.decode((String, Data, String, Date, String?).self) {
            let plaintext = try sealer.open(SealedSecret(keyID: keyID, combined: Array(combined)), context: appKey)
            return (try JSONDecoder().decode(APNsCredentials.self, from: Data(plaintext)), updatedAt, broken)
        }
        return nil
    }

    /// The device reported its app in the background (true) or foreground (false).
    public func setInBackground(deviceID: Int64, _ inBackground: Bool) async throws {
        try await client.query("UPDATE devices SET in_background = \(inBackground) WHERE id = \(deviceID)", logger: logger)
    }

    /// The device reported it opened (or clicked) a message (``StoreFacade/recordOpened(deviceID:msgID:)``).
    public func markOpened(deviceID: Int64, msgID: String) async throws {
        try await recordOpened(deviceID: deviceID, msgID: msgID)
    }
}
