import Foundation
import HeraldCore
import PostgresNIO

extension ReportStore {
    /// Each message's copies by platform family and channel (``DeliveryBreakdown``), in the
    /// order asked; ids that name no message of the app are left out.
    ///
    /// A copy counts as received once it was acknowledged over the connection, or its inbox
    /// copy was (unless it was cancelled before: recalled, replaced, expired), as
    /// ``messages(appID:msgIDs:)`` counts `tcp_delivered`, or the device's Notification
    /// Service Extension reported it (a `delivered` receipt: JPush's `ios_apns_received`).
    public func breakdowns(appID: Int64, msgIDs: [String]) async throws -> [DeliveryBreakdown] {
        let rows = try await client.query(
            """
            SELECT m.msg_id, m.request -> 'notification' IS NOT NULL, m.request -> 'message' IS NOT NULL, d.platform,
              COALESCE(dl.state = 'apns' OR dl.apns_attempts > 0 OR dl.apns_reason IS NOT NULL, false) AS via_apns,
              count(dl.device_id),
              count(*) FILTER (WHERE dl.state = 'apns'),
              count(*) FILTER (WHERE dl.state = 'tcp' OR dl.received_at IS NOT NULL
                                     OR (dl.inbox_seq IS NOT NULL AND dl.inbox_seq <= a.acked_seq
                                         AND dl.state NOT IN ('recalled', 'replaced', 'expired'))),
              count(*) FILTER (WHERE dl.opened_at IS NOT NULL),
              count(*) FILTER (WHERE dl.displayed_at IS NOT NULL),
              count(*) FILTER (WHERE dl.state = 'fcm')
            FROM messages m
            LEFT JOIN deliveries dl ON dl.message_id = m.id
            LEFT JOIN devices d ON d.id = dl.device_id
            LEFT JOIN device_acks a ON a.device_id = dl.device_id
            WHERE m.app_id = \(appID) AND m.msg_id = ANY(\(msgIDs))
            GROUP BY m.id, d.platform, via_apns
            """,
            logger: logger
        )
        var breakdowns: [String: DeliveryBreakdown] = [:]
        for try await row in rows.decode((String, Bool, Bool, String?, Bool, Int64, Int64, Int64, Int64, Int64, Int64).self) {
            let (msgID, hasNotification, hasMessage, platform, viaAPNs, target, apnsSent, received, opened, displayed, fcmSent) = row
            var breakdown = breakdowns[msgID] ?? DeliveryBreakdown(msgID: msgID, hasNotification: hasNotification, hasMessage: hasMessage)
            breakdown.fcmSent += Int(fcmSent)
            if target > 0 {
                if viaAPNs {
                    breakdown.apns =
                        breakdown.apns
                        + .init(target: Int(target), sent: Int(apnsSent), received: Int(received), opened: Int(opened), displayed: Int(displayed))
                } else {
                    let family = DeliveryBreakdown.Family(platform)
                    breakdown.connection[family] =
                        breakdown.connection(family)
                        + .init(target: Int(target), sent: Int(received), received: Int(received), opened: Int(opened), displayed: Int(displayed))
                }
            }
            breakdowns[msgID] = breakdown
        }
        return msgIDs.compactMap { breakdowns[$0] }
    }
}
