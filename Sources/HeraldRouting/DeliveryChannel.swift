import Foundation
import HeraldCore

/// A way to a device other than its MQTT connection that the planner can choose (FCM
/// now; APNs, SMS and webhooks are to move behind it, issue #32): a part of its own, in a
/// target of its own, with what it needs from the store declared there. The center hands
/// it the copies the planner routed to it and records what it answers; it knows nothing
/// of the channel but its ``name``.
public protocol DeliveryChannel: Sendable {
    /// The channel's name: the route's, the copy's delivered state, and the events' `channel`.
    var name: String { get }

    /// Sends copies (of one message or several) and says what became of each, in order.
    /// A channel removes a token it learns is dead itself, before it answers.
    func send(_ copies: [ChannelCopy]) async -> [ChannelOutcome]

    /// Sends a recall command the device's SDK executes (it withdraws the notifications of
    /// those identifiers); true when the service took it.
    func sendRecall(_ recall: ChannelRecall) async -> Bool
}

/// A recall command for one device over a channel.
public struct ChannelRecall: Sendable {
    public var appID: Int64
    public var deviceID: Int64
    public var token: String
    /// The command's own message id (the SDK deduplicates by it).
    public var commandID: String
    /// Every identifier still pending recall on the device.
    public var identifiers: [String]
    /// When the command is of no use any more (the recall window's end).
    public var expiresAt: Date

    public init(appID: Int64, deviceID: Int64, token: String, commandID: String, identifiers: [String], expiresAt: Date) {
        self.appID = appID
        self.deviceID = deviceID
        self.token = token
        self.commandID = commandID
        self.identifiers = identifiers
        self.expiresAt = expiresAt
    }
}

/// One copy for a channel: the message and the device's token there.
public struct ChannelCopy: Sendable {
    public var appID: Int64
    public var messageID: Int64
    public var msgID: String
    public var push: Push
    public var expiresAt: Date
    public var deviceID: Int64
    public var token: String
    /// Sends before this one (0 the first time).
    public var attempts: Int

    public init(
        appID: Int64,
        messageID: Int64,
        msgID: String,
        push: Push,
        expiresAt: Date,
        deviceID: Int64,
        token: String,
        attempts: Int
    ) {
        self.appID = appID
        self.messageID = messageID
        self.msgID = msgID
        self.push = push
        self.expiresAt = expiresAt
        self.deviceID = deviceID
        self.token = token
        self.attempts = attempts
    }
}

/// What a channel says became of a copy.
public enum ChannelOutcome: Sendable, Hashable {
    /// The service took it for the device.
    case sent
    /// The service says the token is dead; the channel removed it from the device.
    case tokenDead(reason: String)
    /// Not taken now: try again after `after` (the service's word) or the center's backoff.
    case retry(reason: String, after: Duration?, attempted: Bool)
    /// Refused for good (the message, not the device).
    case failed(reason: String)
    /// The service refused the app's credentials: nothing more is sent for the app until
    /// new ones are uploaded. `attempted`: this copy's request was the one refused.
    case credentialsRefused(reason: String, attempted: Bool)
    /// The app has no credentials for the channel: the copy waits in the inbox.
    case notConfigured
}
