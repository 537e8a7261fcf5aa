import Foundation
import HeraldCore
import PostgresNIO

/// What `POST /v3/push` answers.
public struct AcceptedPush: Sendable, Hashable {
    public var msgID: String
    public var cid: String?
    /// True when the cid was seen within 24 hours: this is the first push's answer and
    /// nothing new was sent.
    public var repeated: Bool

    public init(msgID: String, cid: String?, repeated: Bool) {
        self.msgID = msgID
        self.cid = cid
        self.repeated = repeated
    }
}

/// A message as the center needs it.
public struct MessageRecord: Sendable {
    public var id: Int64
    public var msgID: String
    public var appID: Int64
    public var push: Push
    public var identifier: String
    public var expiresAt: Date
    public var createdAt: Date
    public var recalled: Bool
    public var superseded: Bool
    /// Its app's quiet hours or daily cap apply to it (read from the app at each fan-out,
    /// whatever the API decided when it accepted it): it is fanned out batch by batch and
    /// each copy checked (``CenterStore/fanOutBatch(job:message:payload:limit:node:lease:)``).
    public var isDeliveryControlled = false

    /// Neither recalled nor replaced: undelivered copies may still go out.
    public var isLive: Bool { !recalled && !superseded }
}

extension MessageRecord {
    /// The columns ``init(_:at:recentPushes:)`` reads, from `messages m`, in this order
    /// (`herald_node_routes`, migration 0024, returns them too: change both together).
    static let columns =
        """
        m.id, m.msg_id, m.app_id, m.request::text, m.identifier, m.expires_at, m.created_at, m.recalled_at IS NOT NULL, \
        m.superseded_at IS NOT NULL, m.audience_time_zone, m.audience_default_zone, \
        EXISTS (SELECT 1 FROM apps a WHERE a.id = m.app_id AND (a.quiet_hours_start IS NOT NULL OR a.daily_cap IS NOT NULL))
        """

    /// The message in the row's columns from `offset` on (``columns``); nil when its id is
    /// null (an outer join found none). Its push comes from `recentPushes` when this node
    /// accepted it lately, else from the stored request.
    init?(_ row: PostgresRandomAccessRow, at offset: Int, recentPushes: RecentPushes) throws {
        guard let id = try row[offset].decode(Int64?.self) else { return nil }
        let msgID = try row[offset + 1].decode(String.self)
        let request = try row[offset + 3].decode(String.self)
        var push = try recentPushes.push(msgID: msgID) ?? JSONDecoder().decode(PushRequest.self, from: Data(request.utf8)).validated()
        if let zone = try row[offset + 9].decode(String?.self) {
            push.audience.timeZone = AudienceTimeZone(zone: zone, fallback: try row[offset + 10].decode(String?.self) ?? zone)
        }
        let appControlled = try row[offset + 11].decode(Bool.self)
        self.init(
            id: id,
            msgID: msgID,
            appID: try row[offset + 2].decode(Int64.self),
            push: push,
            identifier: try row[offset + 4].decode(String.self),
            expiresAt: try row[offset + 5].decode(Date.self),
            createdAt: try row[offset + 6].decode(Date.self),
            recalled: try row[offset + 7].decode(Bool.self),
            superseded: try row[offset + 8].decode(Bool.self),
            isDeliveryControlled: appControlled && push.classification != DeliveryControls.system
        )
    }
}

/// A claimed job: fan a message out, or send its recall commands.
public struct PushJob: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable { case push, recall }
    public var id: Int64
    public var messageID: Int64
    public var kind: Kind
    /// The last device id handled.
    public var cursor: Int64
    /// 1 on the first claim; more when the job was taken over after a crash.
    public var attempt: Int
    /// A spread push's audience, counted when its fan-out began (nil before).
    public var spreadTotal: Int? = nil
    /// A spread push's copies made so far.
    public var spreadDone = 0
}

/// The delivery report of one message.
public struct MessageReport: Sendable, Hashable, Codable {
    public var msgID: String
    public var targeted: Int
    public var tcpDelivered: Int
    public var apnsSent: Int
    public var apnsFailed: Int
    public var apnsFailures: [String: Int]
    public var waiting: Int
    public var opened: Int
    public var recalled: Int
    public var replaced: Int
    public var expired: Int
    public var pending: Int
    /// Fanned out, every copy routed, no APNs retry due.
    public var done: Bool
    /// For a push spread over time (`big_push_duration`), how far its fan-out is.
    public var spread: SpreadProgress? = nil
    /// Copies waiting for the end of their device's quiet hours.
    public var held = 0
    /// Copies not sent because of the app's quiet hours (`drop`) or daily cap.
    public var dropped = 0
    /// SMS of `sms_message` the provider took, and those it refused or that failed every
    /// attempt (migration 0023).
    public var smsSent = 0
    public var smsFailed = 0
    /// Copies FCM took (Android devices offline). `apnsFailed` and `apnsFailures` count the
    /// copies either push service refused.
    public var fcmSent = 0
    /// What the devices' SDKs reported (HeraldKit's receipts).
    public var device = DeviceReceipts()
}

/// A message's copies as the devices' SDKs reported them, each copy counted once per kind.
public struct DeviceReceipts: Sendable, Hashable, Codable {
    /// The Notification Service Extension ran: the device got the APNs copy.
    public var delivered = 0
    public var displayed = 0
    /// Dismissed by the user (a category with customDismissAction).
    public var dismissed = 0
    /// The SDK could not use the copy, or a part of it.
    public var dropped = 0
    /// Copies on which each action was tapped, by the action's identifier.
    public var actions: [String: Int] = [:]

    public init() {}
}

/// How far a push spread over time has gone out.
public struct SpreadProgress: Sendable, Hashable, Codable {
    /// `big_push_duration`.
    public var minutes: Int
    /// The audience counted when the fan-out began; nil before it began.
    public var audience: Int?
    /// When the next batch is due; nil once every copy is made (or before the first).
    public var nextBatchAt: Date?
}

/// One device's status for one message.
public struct DeliveryStatus: Sendable, Hashable, Codable {
    public var status: String
    public var apnsReason: String?
    public var opened: Bool

    /// The state the status API gives a copy, in SQL over `deliveries dl`, `messages m` and
    /// `device_acks a` (left joined): a final state as it is (`dropped` too: the daily cap
    /// refused it for good), a copy at or below its device's acknowledged inbox position as
    /// `tcp`, one whose message has expired as `expired`, else its state (`pending`,
    /// `waiting`, `held`). Read by ``name(ofState:)``.
    static let stateSQL = """
        CASE WHEN dl.state IN ('recalled', 'replaced', 'failed', 'apns', 'fcm', 'tcp', 'expired', 'dropped') THEN dl.state \
        WHEN dl.inbox_seq IS NOT NULL AND dl.inbox_seq <= a.acked_seq THEN 'tcp' \
        WHEN m.expires_at <= now() THEN 'expired' \
        ELSE dl.state END
        """

    /// A copy's status as the status API names it, from its state (``stateSQL``).
    static func name(ofState state: String) -> String {
        switch state {
        case "tcp": "delivered_tcp"
        case "apns": "sent_apns"
        case "fcm": "sent_fcm"
        default: state
        }
    }
}
