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

    /// The device reported its app in the background (true) or foreground (false).
    public func setInBackground(deviceID: Int64, _ inBackground: Bool) async throws {
        try await client.query("UPDATE devices SET in_background = \(inBackground) WHERE id = \(deviceID)", logger: logger)
    }

    /// The device reported it opened (or clicked) a message (``StoreFacade/recordOpened(deviceID:msgID:)``).
    public func markOpened(deviceID: Int64, msgID: String) async throws {
        try await recordOpened(deviceID: deviceID, msgID: msgID)
    }
}
