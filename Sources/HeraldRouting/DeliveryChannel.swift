import Foundation
import HeraldCore

/// A way to a device other than its MQTT connection that the planner can choose (APNs,
/// FCM): a part of its own, in a target of its own, with what it needs from the store
/// declared there. The center hands it the copies the planner routed to it and records
/// what it answers, as it answers; it knows nothing of the channel but its ``name``.
public protocol DeliveryChannel: Sendable {
    /// The channel's name: the route's (``RoutePlanner/Route/channel``), the copy's
    /// delivered state, and the events' `channel`.
    var name: String { get }

    /// Sends copies (of one message or several) and reports what became of each as it
    /// becomes known: `report(index, outcome)`, once per copy, `index` into `copies`. The
    /// center records each report as it comes, so a copy the service took shows as sent at
    /// once and a crash meanwhile doesn't send it again. A channel removes a token it
    /// learns is dead itself, before it reports.
    func send(_ copies: [ChannelCopy], report: @escaping @Sendable (Int, ChannelOutcome) async -> Void) async

    /// Sends a recall command the device's SDK executes (it withdraws the notifications of
    /// those identifiers); true when the service took it.
    func sendRecall(_ recall: ChannelRecall) async -> Bool
}

/// A recall command for one device over a channel.
public struct ChannelRecall: Sendable {
    public var appID: Int64
    public var deviceID: Int64
    /// The device's token for the channel.
    public var token: String
    /// The command's own message id (the SDK deduplicates by it).
    public var commandID: String
    /// Every identifier still pending recall on the device.
    public var identifiers: [String]
    /// When the command is of no use any more (the recall window's end).
    public var expiresAt: Date
    /// The planner's route for the command (APNs: with its environment).
    public var route: RoutePlanner.Route

    public init(
        appID: Int64,
        deviceID: Int64,
        token: String,
        commandID: String,
        identifiers: [String],
        expiresAt: Date,
        route: RoutePlanner.Route
    ) {
        self.appID = appID
        self.deviceID = deviceID
        self.token = token
        self.commandID = commandID
        self.identifiers = identifiers
        self.expiresAt = expiresAt
        self.route = route
    }
}

/// What the copies of one message share, made once for a send and referenced by each
/// copy (a push is a large value: copying it into every copy costs a retain per field).
public final class ChannelMessage: Sendable {
    public let appID: Int64
    public let messageID: Int64
    public let msgID: String
    public let push: Push
    /// When the message was accepted (a Live Activity update's `timestamp`).
    public let createdAt: Date
    public let expiresAt: Date
    /// Whether its copies' events are recorded (a token found dead writes one).
    public let recordsEvents: Bool

    public init(appID: Int64, messageID: Int64, msgID: String, push: Push, createdAt: Date, expiresAt: Date, recordsEvents: Bool) {
        self.appID = appID
        self.messageID = messageID
        self.msgID = msgID
        self.push = push
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.recordsEvents = recordsEvents
    }
}

/// One copy for a channel: its message, the device's tokens and what its rendering reads
/// of the device, and the planner's route.
public struct ChannelCopy: Sendable {
    public var message: ChannelMessage
    public var deviceID: Int64
    /// The device's token for the channel, if it has one (APNs: its APNs token).
    public var token: String?
    /// The device's VoIP token (APNs: a VoIP push, or the one beside a notification).
    public var voipToken: String?
    /// The device's badge after this push, when the push sets or changes it.
    public var badge: Int?
    /// The device's language, for a push with content per language (nil: its default).
    public var language: String?
    /// The planner's route (APNs: with its environment).
    public var route: RoutePlanner.Route
    /// Sends before this one (0 the first time).
    public var attempts: Int

    public init(
        message: ChannelMessage,
        deviceID: Int64,
        token: String?,
        voipToken: String? = nil,
        badge: Int? = nil,
        language: String? = nil,
        route: RoutePlanner.Route,
        attempts: Int
    ) {
        self.message = message
        self.deviceID = deviceID
        self.token = token
        self.voipToken = voipToken
        self.badge = badge
        self.language = language
        self.route = route
        self.attempts = attempts
    }

    public var appID: Int64 { message.appID }
    public var messageID: Int64 { message.messageID }
    public var msgID: String { message.msgID }
    public var push: Push { message.push }
    public var createdAt: Date { message.createdAt }
    public var expiresAt: Date { message.expiresAt }
    public var recordsEvents: Bool { message.recordsEvents }
}

/// What the service answered a copy's request with, for its events: its id for the
/// request and the HTTP status (APNs' apns-id; FCM gives neither here).
public struct ChannelReceipt: Sendable, Hashable {
    public var requestID: UUID?
    public var status: Int?

    public init(requestID: UUID? = nil, status: Int? = nil) {
        self.requestID = requestID
        self.status = status
    }

    public static let none = ChannelReceipt()
}

/// What a channel says became of a copy.
public enum ChannelOutcome: Sendable, Hashable {
    /// The service took it for the device.
    case sent(ChannelReceipt)
    /// The service says the token is dead; the channel removed it from the device.
    case tokenDead(reason: String, receipt: ChannelReceipt)
    /// Not taken now: try again after `after` (the service's word) or the center's
    /// backoff. `attempted`: a request went out (a refusal by an open circuit is none).
    case retry(reason: String, after: Duration?, attempted: Bool)
    /// Refused for good (this copy, not the device's token).
    case failed(reason: String, attempted: Bool, receipt: ChannelReceipt)
    /// The service refused the app's credentials: nothing more is sent for the app until
    /// new ones are uploaded. `attempted`: this copy's request was the one refused.
    case credentialsRefused(reason: String, attempted: Bool)
    /// Nothing to send it with: the app has no credentials for the channel, or the device
    /// no token for it. The copy waits in the inbox (or expires, if not stored).
    case notConfigured

    /// Whether a request for the copy went out: the service may have taken it, so the
    /// outcome is recorded at once (a crash before it is would send the copy again).
    public var requestWentOut: Bool {
        switch self {
        case .sent, .tokenDead: true
        case .retry(_, _, let attempted), .failed(_, let attempted, _), .credentialsRefused(_, let attempted): attempted
        case .notConfigured: false
        }
    }
}
