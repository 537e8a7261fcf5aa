import Foundation
import HeraldCore
import PostgresNIO

extension ConsoleStore {
    /// Where a message came from.
    public enum MessageSource: String, Sendable, CaseIterable {
        case api, console, schedule
    }

    /// What the history's search asks: any of them, together.
    public struct MessageQuery: Sendable, Hashable {
        /// A msg_id, exactly.
        public var msgID: String?
        /// Words in the notification's text, its title or the in-app message's content.
        public var text: String?
        /// Sent on this day (UTC).
        public var day: Date?
        public var source: MessageSource?
        public var limit = 50

        public init(msgID: String? = nil, text: String? = nil, day: Date? = nil, source: MessageSource? = nil) {
            self.msgID = msgID
            self.text = text
            self.day = day
            self.source = source
        }
    }

    /// A message as the history lists it.
    public struct ListedMessage: Sendable, Hashable {
        public var msgID: String
        public var sentAt: Date
        public var alert: String?
        public var source: MessageSource
        public var recalled: Bool
    }

    /// A message as its page shows it: the stored request (the `/v3/push` body as
    /// validated), its identifier (what a replacing push names) and its state.
    public struct MessageDetail: Sendable, Hashable {
        public var msgID: String
        public var sentAt: Date
        public var body: String
        public var identifier: String
        public var source: MessageSource
        public var recalledAt: Date?
        public var expiresAt: Date
    }

    /// The SQL of a message's source (`m` the message): the console's mark, else a
    /// schedule's run that fired it, else the API.
    static let sourceColumn = """
        COALESCE(m.source, CASE WHEN EXISTS (SELECT 1 FROM schedule_runs r WHERE r.msg_id = m.msg_id) THEN 'schedule' END, 'api')
        """

    /// The app's messages the query finds, newest first.
    public func messages(appID: Int64, _ query: MessageQuery) async throws -> [ListedMessage] {
        let pattern = query.text.map {
            "%"
                + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
                .replacingOccurrences(of: "_", with: "\\_") + "%"
        }
        let dayStart = query.day
        let dayEnd = query.day?.addingTimeInterval(86_400)
        let rows = try await client.query(
            """
            SELECT msg_id, created_at, alert, source, recalled FROM (
                SELECT m.id, m.msg_id, m.created_at,
                       COALESCE(m.request->'notification'->>'alert', m.request->'notification'->'ios'->>'alert',
                                m.request->'message'->>'msg_content') AS alert,
                       \(unescaped: Self.sourceColumn) AS source, m.recalled_at IS NOT NULL AS recalled,
                       m.request AS request
                FROM messages m
                WHERE m.app_id = \(appID)
                  AND (\(query.msgID)::text IS NULL OR m.msg_id = \(query.msgID))
                  AND (\(dayStart)::timestamptz IS NULL OR (m.created_at >= \(dayStart) AND m.created_at < \(dayEnd)))
            ) found
            WHERE (\(query.source?.rawValue)::text IS NULL OR source = \(query.source?.rawValue))
              AND (\(pattern)::text IS NULL OR alert ILIKE \(pattern)
                   OR request->'notification'->'ios'->'alert'->>'title' ILIKE \(pattern)
                   OR request->'notification'->'android'->>'title' ILIKE \(pattern))
            ORDER BY id DESC LIMIT \(query.limit)
            """,
            logger: logger
        )
        var found: [ListedMessage] = []
        for try await (msgID, sentAt, alert, source, recalled) in rows.decode((String, Date, String?, String, Bool).self) {
            found.append(
                ListedMessage(msgID: msgID, sentAt: sentAt, alert: alert, source: MessageSource(rawValue: source) ?? .api, recalled: recalled)
            )
        }
        return found
    }

    /// One message of the app, or nil.
    public func message(appID: Int64, msgID: String) async throws -> MessageDetail? {
        let rows = try await client.query(
            """
            SELECT m.msg_id, m.created_at, m.request::text, m.identifier, \(unescaped: Self.sourceColumn), m.recalled_at, m.expires_at
            FROM messages m WHERE m.app_id = \(appID) AND m.msg_id = \(msgID)
            """,
            logger: logger
        )
        for try await (msgID, sentAt, body, identifier, source, recalledAt, expiresAt) in rows.decode(
            (String, Date, String, String, String, Date?, Date).self
        ) {
            return MessageDetail(
                msgID: msgID,
                sentAt: sentAt,
                body: body,
                identifier: identifier,
                source: MessageSource(rawValue: source) ?? .api,
                recalledAt: recalledAt,
                expiresAt: expiresAt
            )
        }
        return nil
    }
}

extension ConsoleStore {
    /// Marks a device of the app as a test device, or not. False when there is no such device.
    public func setTestDevice(appID: Int64, registrationID: String, _ test: Bool) async throws -> Bool {
        try await client.query(
            "UPDATE devices SET test = \(test) WHERE app_id = \(appID) AND registration_id = \(registrationID) RETURNING 1",
            logger: logger
        ).count() == 1
    }

    /// The app's test devices' registration ids (at most `limit`), oldest first.
    public func testDevices(appID: Int64, limit: Int = 1000) async throws -> [String] {
        let rows = try await client.query(
            "SELECT registration_id FROM devices WHERE app_id = \(appID) AND test ORDER BY id LIMIT \(limit)",
            logger: logger
        )
        var found: [String] = []
        for try await id in rows.decode(String.self) { found.append(id) }
        return found
    }

    /// Whether the app's device is a test device (nil: no such device).
    public func isTestDevice(appID: Int64, registrationID: String) async throws -> Bool? {
        let rows = try await client.query(
            "SELECT test FROM devices WHERE app_id = \(appID) AND registration_id = \(registrationID)",
            logger: logger
        )
        for try await test in rows.decode(Bool.self) { return test }
        return nil
    }
}
