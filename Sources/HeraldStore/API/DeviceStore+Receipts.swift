import Foundation
import HeraldCore
import PostgresNIO

/// What a device reports about a message after it arrived (HeraldKit's receipts).
public struct DeviceReceipt: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The Notification Service Extension ran: the device got the APNs copy.
        case delivered
        /// It was shown.
        case displayed
        /// The user dismissed it (a category with customDismissAction).
        case dismissed
        /// The user opened it.
        case opened
        /// The user tapped one of its category's actions.
        case action
        /// The SDK could not use what arrived (with the reason).
        case dropped
    }

    public var msgID: String
    public var kind: Kind
    /// The action's identifier, for ``Kind/action``.
    public var action: String?
    /// Why, for ``Kind/dropped``.
    public var reason: String?
    public var at: Date

    public init(msgID: String, kind: Kind, action: String? = nil, reason: String? = nil, at: Date) {
        self.msgID = msgID
        self.kind = kind
        self.action = action
        self.reason = reason
        self.at = at
    }
}

extension DeviceStore {
    /// Records a device's receipts on its copies of the app's messages: the first of each
    /// kind counts (a receipt sent again changes nothing), and a message that records
    /// events gets one (`delivered`, `displayed`, `dismissed`, `action` with its
    /// identifier, `dropped` with its reason; `opened` as ``StoreFacade/recordOpened(deviceID:msgID:)`` writes it).
    /// Returns how many receipts named a copy of this device's; nil when the app has no such
    /// device.
    public func recordReceipts(appID: Int64, registrationID: String, _ receipts: [DeviceReceipt]) async throws -> Int? {
        guard Identifiers.isRegistrationID(registrationID) else { return nil }
        let found = try await client.query(
            "SELECT id FROM devices WHERE app_id = \(appID) AND registration_id = \(registrationID)",
            logger: logger
        )
        var device: Int64?
        for try await id in found.decode(Int64.self) { device = id }
        guard let deviceID = device else { return nil }
        let stamped = receipts.filter { $0.kind != .opened && Identifiers.isMsgID($0.msgID) }
        var recorded = 0
        if !stamped.isEmpty {
            let rows = try await client.query(
                """
                WITH r AS (
                    SELECT * FROM unnest(\(stamped.map(\.msgID))::text[], \(stamped.map(\.kind.rawValue))::text[],
                                         \(stamped.map { $0.action ?? "" })::text[], \(stamped.map { $0.reason ?? "" })::text[],
                                         \(stamped.map(\.at))::timestamptz[])
                        AS r(msg_id, kind, action, reason, at)
                ), copies AS (
                    SELECT r.kind, NULLIF(r.action, '') AS action, r.reason, r.at, m.id AS message_id, m.msg_id, m.events, m.app_id
                    FROM r JOIN messages m ON m.msg_id = r.msg_id AND m.app_id = \(appID)
                    JOIN deliveries dl ON dl.message_id = m.id AND dl.device_id = \(deviceID)
                ), firsts AS (
                    SELECT message_id,
                        min(at) FILTER (WHERE kind = 'delivered') AS delivered,
                        min(at) FILTER (WHERE kind = 'displayed') AS displayed,
                        min(at) FILTER (WHERE kind = 'dismissed') AS dismissed,
                        min(at) FILTER (WHERE kind = 'dropped') AS dropped,
                        (array_agg(reason ORDER BY at) FILTER (WHERE kind = 'dropped'))[1] AS dropped_reason
                    FROM copies GROUP BY message_id
                ), before AS (
                    SELECT dl.message_id, dl.received_at, dl.displayed_at, dl.dismissed_at, dl.dropped_at FROM deliveries dl
                    WHERE dl.device_id = \(deviceID) AND dl.message_id IN (SELECT message_id FROM firsts)
                ), stamped AS (
                    UPDATE deliveries dl SET received_at = COALESCE(dl.received_at, f.delivered),
                        displayed_at = COALESCE(dl.displayed_at, f.displayed), dismissed_at = COALESCE(dl.dismissed_at, f.dismissed),
                        dropped_reason = CASE WHEN dl.dropped_at IS NULL THEN f.dropped_reason ELSE dl.dropped_reason END,
                        dropped_at = COALESCE(dl.dropped_at, f.dropped)
                    FROM firsts f WHERE dl.message_id = f.message_id AND dl.device_id = \(deviceID)
                ), actions AS (
                    INSERT INTO delivery_actions (message_id, device_id, action, at)
                    SELECT DISTINCT ON (message_id, action) message_id, \(deviceID), action, at FROM copies
                    WHERE kind = 'action' AND action IS NOT NULL ORDER BY message_id, action, at
                    ON CONFLICT DO NOTHING
                    RETURNING message_id, action
                ), new_events AS (
                    SELECT c.app_id, c.kind AS type, c.message_id, c.msg_id, d.id AS device_id, d.registration_id,
                           CASE c.kind WHEN 'action' THEN jsonb_build_object('action', c.action)
                               WHEN 'dropped' THEN jsonb_build_object('reason', c.reason) ELSE '{}'::jsonb END AS data
                    FROM (SELECT DISTINCT ON (message_id, kind, action) * FROM copies ORDER BY message_id, kind, action, at) c
                    JOIN devices d ON d.id = \(deviceID)
                    LEFT JOIN before b ON b.message_id = c.message_id
                    WHERE c.events AND CASE c.kind
                        WHEN 'delivered' THEN b.received_at IS NULL
                        WHEN 'displayed' THEN b.displayed_at IS NULL
                        WHEN 'dismissed' THEN b.dismissed_at IS NULL
                        WHEN 'dropped' THEN b.dropped_at IS NULL
                        ELSE EXISTS (SELECT 1 FROM actions a WHERE a.message_id = c.message_id AND a.action = c.action)
                    END
                    -- In the order they happened on the device.
                    ORDER BY c.at, array_position(ARRAY['dropped', 'delivered', 'displayed', 'action', 'dismissed'], c.kind)
                ), \(unescaped: EventRows.ctes)
                SELECT count(*) FROM copies
                """,
                logger: logger
            )
            for try await count in rows.decode(Int64.self) { recorded += Int(count) }
        }
        for receipt in receipts where receipt.kind == .opened && Identifiers.isMsgID(receipt.msgID) {
            let rows = try await client.query(
                """
                SELECT count(*) FROM deliveries dl JOIN messages m ON m.id = dl.message_id
                WHERE m.msg_id = \(receipt.msgID) AND m.app_id = \(appID) AND dl.device_id = \(deviceID)
                """,
                logger: logger
            )
            for try await count in rows.decode(Int64.self) where count > 0 {
                try await recordOpened(deviceID: deviceID, msgID: receipt.msgID)
                recorded += 1
            }
        }
        return recorded
    }
}
