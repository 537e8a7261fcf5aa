import Foundation
import HeraldCore

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

    /// Neither recalled nor replaced: undelivered copies may still go out.
    public var isLive: Bool { !recalled && !superseded }
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
}

/// One targeted device of a fan-out batch, with what routing needs.
public struct FanOutTarget: Sendable, Hashable {
    public var deviceID: Int64
    public var registrationID: String
    public var platform: Platform
    public var apnsToken: String?
    public var apnsEnvironment: APNsEnvironment?
    public var voipToken: String?
    public var tokenValid: Bool
    public var inBackground: Bool
    /// The position in the device's inbox, when the message is stored.
    public var inboxSeq: Int64?
    /// The device's badge after this push, when the push sets or changes it.
    public var badge: Int?
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
}

/// One device's status for one message.
public struct DeliveryStatus: Sendable, Hashable, Codable {
    public var status: String
    public var apnsReason: String?
    public var opened: Bool
}

extension FanOutTarget {
    /// A targeted device as the explicit fan-out statements return it, in this order: id,
    /// registration id, platform, APNs token, APNs environment, VoIP token, token valid,
    /// in background, inbox seq (all null on the row of a push without a copy).
    typealias Columns = (Int64?, String?, String?, String?, String?, String?, Bool?, Bool?, Int64?)

    init?(_ columns: Columns) {
        guard let deviceID = columns.0, let registrationID = columns.1 else { return nil }
        self.init(
            deviceID: deviceID,
            registrationID: registrationID,
            platform: columns.2.flatMap(Platform.init(rawValue:)) ?? .ios,
            apnsToken: columns.3,
            apnsEnvironment: columns.4.flatMap(APNsEnvironment.init(rawValue:)),
            voipToken: columns.5,
            tokenValid: columns.6 ?? false,
            inBackground: columns.7 ?? false,
            inboxSeq: columns.8,
            badge: nil
        )
    }
}
