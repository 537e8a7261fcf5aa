import Foundation
import HeraldCore

/// A push on its way into the store: validated, its message id chosen, waiting for the
/// group commit that makes it durable.
struct PendingPush: Sendable {
    var msgID: String
    var appID: Int64
    /// The request as stored (`messages.request`).
    var json: String
    var identifier: String
    var timeToLive: Int32
    var expiresAt: Date
    var createdAt: Date
    /// For a push to explicit registration ids or aliases: checked to match a device in
    /// the statement that stores it. Nil when the caller checked the audience already.
    var registrationIDs: [String]?
    var aliases: [String]?

    init(_ request: PushRequest, push: Push, appID: Int64, now: Date) throws {
        msgID = Identifiers.newMessageID(milliseconds: UInt64(max(0, now.timeIntervalSince1970 * 1000)))
        self.appID = appID
        json = String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
        identifier = push.identifier(messageID: msgID)
        timeToLive = Int32(clamping: push.timeToLive)
        expiresAt = now.addingTimeInterval(TimeInterval(push.timeToLive))
        createdAt = now
        if HeraldStore.fansOutExplicitly(push) {
            registrationIDs = push.audience.registrationIDs
            aliases = push.audience.aliases
        }
    }
}
