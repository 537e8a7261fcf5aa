import Foundation
import HeraldCore
import HeraldRouting

/// A push on its way into the store: validated, its message id chosen, waiting for the
/// group commit that makes it durable (``APIStore/acceptPushes(_:fanningOutTo:)``). A
/// class: it is handed through the group commit and into the statement's columns, and a
/// struct this size was copied field by field each time.
public final class PendingPush: Sendable {
    public let msgID: String
    let appID: Int64
    /// The client's idempotency key, for a push of a batch single push (see
    /// ``init(_:push:cid:appID:now:fansOutHere:)``); nil for every other push.
    let cid: String?
    /// The request as stored (`messages.request`).
    let json: String
    let identifier: String
    let timeToLive: Int32
    let expiresAt: Date
    let createdAt: Date
    /// For a push to explicit registration ids or aliases: checked to match a device in
    /// the statement that stores it. Nil when the caller checked the audience already.
    let registrationIDs: [String]?
    let aliases: [String]?
    public let push: Push
    /// How it travels, decided once (``PushPath``).
    public let path: PushPath
    /// Fanned out in the statement that accepts it (see ``FannedOutPushSink``).
    public let fansOut: Bool
    /// What goes into the inboxes when it is fanned out at acceptance and stored (a time
    /// to live above 0).
    let devicePayloads: DevicePayloads?
    /// Whether its events are recorded: its app records them, or it has a callback.
    let recordsEvents: Bool
    /// Its callback as stored (``PushCallback/storedJSON``), if it has one.
    let callbackJSON: String?
    /// The audit entry of the request that sent it, written in its commit; "" for none.
    let auditJSON: String
    /// The route planner's answer, for a device in the background and one in the
    /// foreground: whether a copy may go over the device's connection on a peer
    /// (``RoutePlanner/mayTravelOverConnection(_:inBackground:)``).
    let travelsInBackground: Bool
    let travelsInForeground: Bool

    /// - Parameters:
    ///   - msgID: its message id (``APIStore/newMsgID()``).
    ///   - cid: the push's cid, kept apart from `push` (whose own cid is nil, so that its
    ///     ``PushPath`` is a group commit's). Only a batch single push gives one: it has
    ///     already answered the cids stored in the last 24 hours and cleared older ones, so a
    ///     cid can only clash with one committed meanwhile; the statement then stores
    ///     nothing for it and the caller reads the first push back.
    ///   - fansOutHere: whether a center in this process takes the pushes fanned out at
    ///     acceptance.
    ///   - appRecordsEvents: whether its app records every event (``EventApps``); a push
    ///     with a callback records its own in any case.
    ///   - audit: the audit entry of the request, committed with the push.
    public init(
        _ request: PushRequest,
        push: Push,
        msgID: String,
        cid: String? = nil,
        appID: Int64,
        now: Date,
        fansOutHere: Bool,
        appRecordsEvents: Bool = false,
        audit: AuditEntry? = nil
    ) {
        self.msgID = msgID
        self.appID = appID
        self.cid = cid
        json = String(decoding: request.storedJSON, as: UTF8.self)
        identifier = push.identifier(msgID: msgID)
        timeToLive = Int32(clamping: push.timeToLive)
        expiresAt = now.addingTimeInterval(TimeInterval(push.timeToLive))
        createdAt = now
        let path = push.path
        registrationIDs = path.fansOutExplicitly ? push.audience.registrationIDs : nil
        aliases = path.fansOutExplicitly ? push.audience.aliases : nil
        self.push = push
        self.path = path
        let fansOut = fansOutHere && path.fansOutAtAcceptance
        self.fansOut = fansOut
        devicePayloads = fansOut && push.timeToLive > 0 ? PushRendering.devicePayloads(push, msgID: msgID) : nil
        recordsEvents = appRecordsEvents || push.callback != nil
        callbackJSON = push.callback?.storedJSON
        auditJSON = audit?.storedJSON ?? ""
        let facts = MessageFacts(push)
        travelsInBackground = RoutePlanner.mayTravelOverConnection(facts, inBackground: true)
        travelsInForeground = RoutePlanner.mayTravelOverConnection(facts, inBackground: false)
    }
}

extension PendingPush {
    /// This push as fanned out at acceptance, before its targets are added.
    func fannedOut(job: Int64, messageID: Int64) -> FannedOutPush {
        FannedOutPush(
            job: PushJob(id: job, messageID: messageID, kind: .push, cursor: .max, attempt: 1),
            message: MessageRecord(
                id: messageID,
                msgID: msgID,
                appID: appID,
                push: push,
                identifier: identifier,
                expiresAt: expiresAt,
                createdAt: createdAt,
                recalled: false,
                superseded: false
            ),
            targets: [],
            devicePayloads: devicePayloads
        )
    }
}

/// What one group commit of pushes stored (``APIStore/acceptPushes(_:fanningOutTo:)``).
public struct AcceptedPushes: Sendable {
    /// The msg ids stored (a push whose explicit audience matched no device is not).
    public var stored: Set<String> = []
    /// The pushes fanned out at acceptance, in the order they were given.
    public var fannedOut: [FannedOutPush] = []
    /// The nodes copies were routed to (``FannedOutPushSink/peerRouting``).
    public var routedTo: Set<String> = []
}
