import Foundation
import HeraldCore
import PostgresNIO

/// What the reports read (``APIStore/reports``): JPush's received and status reports, a
/// message's deliveries per device, and the breakdown by channel and outcome.
public struct ReportStore: StoreFacade {
    let core: StoreCore
}

extension APIStore {
    /// The reports of messages.
    public var reports: ReportStore { ReportStore(core: core) }
}

extension ReportStore {
    /// Delivery reports of the app's messages, in the order asked; unknown ids are left out.
    public func messages(appID: Int64, msgIDs: [String]) async throws -> [MessageReport] {
        let rows = try await client.query(
            """
            SELECT m.msg_id,
              count(dl.device_id),
              count(*) FILTER (WHERE dl.state = 'tcp' OR (dl.inbox_seq IS NOT NULL AND dl.inbox_seq <= a.acked_seq
                                                          AND dl.state NOT IN ('recalled', 'replaced', 'expired'))),
              count(*) FILTER (WHERE dl.state = 'apns'),
              count(*) FILTER (WHERE dl.state = 'failed'),
              count(*) FILTER (WHERE dl.state = 'waiting' AND NOT (dl.inbox_seq IS NOT NULL AND dl.inbox_seq <= COALESCE(a.acked_seq, 0))
                                     AND m.expires_at > now()),
              count(*) FILTER (WHERE dl.opened_at IS NOT NULL),
              count(*) FILTER (WHERE dl.state = 'recalled'),
              count(*) FILTER (WHERE dl.state = 'replaced'),
              count(*) FILTER (WHERE dl.state = 'expired' OR (dl.state IN ('waiting', 'pending') AND m.expires_at <= now()
                                     AND NOT (dl.inbox_seq IS NOT NULL AND dl.inbox_seq <= COALESCE(a.acked_seq, 0)))),
              count(*) FILTER (WHERE dl.state = 'pending'),
              m.fanned_out_at IS NOT NULL AND count(*) FILTER (WHERE dl.state = 'pending' OR dl.next_attempt_at IS NOT NULL) = 0,
              (m.request -> 'options' ->> 'big_push_duration')::integer,
              (SELECT j.spread_total FROM push_jobs j WHERE j.message_id = m.id AND j.kind = 'push'),
              (SELECT j.available_at FROM push_jobs j WHERE j.message_id = m.id AND j.kind = 'push' AND j.spread_total IS NOT NULL),
              m.fanned_out_at IS NOT NULL,
              count(*) FILTER (WHERE dl.state = 'held'),
              count(*) FILTER (WHERE dl.state = 'dropped'),
              count(*) FILTER (WHERE dl.received_at IS NOT NULL),
              count(*) FILTER (WHERE dl.displayed_at IS NOT NULL),
              count(*) FILTER (WHERE dl.dismissed_at IS NOT NULL),
              count(*) FILTER (WHERE dl.dropped_at IS NOT NULL),
              count(*) FILTER (WHERE dl.state = 'fcm')
            FROM messages m
            LEFT JOIN deliveries dl ON dl.message_id = m.id
            LEFT JOIN device_acks a ON a.device_id = dl.device_id
            WHERE m.app_id = \(appID) AND m.msg_id = ANY(\(msgIDs))
            GROUP BY m.id
            """,
            logger: logger
        )
        var reports: [String: MessageReport] = [:]
        for try await row in rows {
            let columns = row.makeRandomAccess()
            func count(_ index: Int) throws -> Int { Int(try columns[index].decode(Int64.self)) }
            let msgID = try columns[0].decode(String.self)
            let targeted = try count(1)
            reports[msgID] = MessageReport(
                msgID: msgID,
                targeted: targeted,
                tcpDelivered: try count(2),
                apnsSent: try count(3),
                apnsFailed: try count(4),
                apnsFailures: [:],
                waiting: try count(5),
                opened: try count(6),
                recalled: try count(7),
                replaced: try count(8),
                expired: try count(9),
                pending: try count(10),
                done: try columns[11].decode(Bool.self),
                spread: Self.spread(
                    (
                        try columns[12].decode(Int32?.self), try columns[13].decode(Int32?.self), try columns[14].decode(Date?.self),
                        try columns[15].decode(Bool.self)
                    ),
                    targeted: targeted
                ),
                held: try count(16),
                dropped: try count(17)
            )
            reports[msgID]?.device.delivered = try count(18)
            reports[msgID]?.device.displayed = try count(19)
            reports[msgID]?.device.dismissed = try count(20)
            reports[msgID]?.fcmSent = try count(22)
            reports[msgID]?.device.dropped = try count(21)
        }
        let actions = try await client.query(
            """
            SELECT m.msg_id, a.action, count(*) FROM messages m JOIN delivery_actions a ON a.message_id = m.id
            WHERE m.app_id = \(appID) AND m.msg_id = ANY(\(msgIDs))
            GROUP BY m.msg_id, a.action
            """,
            logger: logger
        )
        for try await (msgID, action, count) in actions.decode((String, String, Int64).self) {
            reports[msgID]?.device.actions[action] = Int(count)
        }
        let failures = try await client.query(
            """
            SELECT m.msg_id, dl.apns_reason, count(*) FROM messages m JOIN deliveries dl ON dl.message_id = m.id
            WHERE m.app_id = \(appID) AND m.msg_id = ANY(\(msgIDs)) AND dl.state = 'failed' AND dl.apns_reason IS NOT NULL
            GROUP BY m.msg_id, dl.apns_reason
            """,
            logger: logger
        )
        for try await (msgID, reason, count) in failures.decode((String, String, Int64).self) {
            reports[msgID]?.apnsFailures[reason] = Int(count)
        }
        let sms = try await client.query(
            """
            SELECT m.msg_id, count(*) FILTER (WHERE o.state = 'sent'), count(*) FILTER (WHERE o.state = 'failed')
            FROM messages m JOIN sms_outbox o ON o.message_id = m.id
            WHERE m.app_id = \(appID) AND m.msg_id = ANY(\(msgIDs))
            GROUP BY m.msg_id
            """,
            logger: logger
        )
        for try await (msgID, sent, failed) in sms.decode((String, Int64, Int64).self) {
            reports[msgID]?.smsSent = Int(sent)
            reports[msgID]?.smsFailed = Int(failed)
        }
        return msgIDs.compactMap { reports[$0] }
    }

    /// A spread push's progress from its `big_push_duration`, its job's count and next
    /// batch, and whether it is fanned out (its job gone: the audience is what it reached).
    private static func spread(_ row: (Int32?, Int32?, Date?, Bool), targeted: Int) -> SpreadProgress? {
        guard let minutes = row.0, minutes > 0 else { return nil }
        return SpreadProgress(minutes: Int(minutes), audience: row.1.map(Int.init) ?? (row.3 ? targeted : nil), nextBatchAt: row.3 ? nil : row.2)
    }

    /// Each registration id's status for one message of the app; nil when the app has no
    /// such message.
    public func deliveryStatuses(appID: Int64, msgID: String, registrationIDs: [String]) async throws -> [String: DeliveryStatus]? {
        let exists = try await client.query(
            "SELECT 1 FROM messages WHERE app_id = \(appID) AND msg_id = \(msgID)",
            logger: logger
        ).count()
        guard exists > 0 else { return nil }
        let rows = try await client.query(
            """
            SELECT d.registration_id, \(unescaped: DeliveryStatus.stateSQL), dl.apns_reason, dl.opened_at IS NOT NULL
            FROM messages m JOIN deliveries dl ON dl.message_id = m.id JOIN devices d ON d.id = dl.device_id
                 LEFT JOIN device_acks a ON a.device_id = dl.device_id
            WHERE m.app_id = \(appID) AND m.msg_id = \(msgID) AND d.registration_id = ANY(\(registrationIDs))
            """,
            logger: logger
        )
        var statuses: [String: DeliveryStatus] = [:]
        for rid in registrationIDs { statuses[rid] = DeliveryStatus(status: "not_targeted", apnsReason: nil, opened: false) }
        for try await (rid, state, reason, opened) in rows.decode((String, String, String?, Bool).self) {
            let status = DeliveryStatus.name(ofState: state)
            statuses[rid] = DeliveryStatus(status: status, apnsReason: reason, opened: opened)
        }
        return statuses
    }
}
