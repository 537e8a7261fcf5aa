/// How a push travels from acceptance to its copies, decided once from the push: the API,
/// the store and the message center all read it here.
///
/// - A push with a cid or a replace is committed alone: both read and lock earlier
///   messages of the app, which a group commit can't do for one of its members. Any other
///   push is group-committed with the pushes arriving meanwhile. (A batch single push
///   checks its cids beforehand and hands each push to the group commit without its cid,
///   carried apart by its `PendingPush`.)
/// - A push whose audience is an explicit list (registration ids or aliases, not both, no
///   tags) and that leaves the badge alone (a badge change is read and written per device,
///   in order) is fanned out whole in one statement; others are fanned out batch by batch
///   from a cursor.
/// - A group-committed explicit push has its audience checked in the statement that stores
///   it (nothing is stored when no device matches); for every other push the API checks
///   the audience before accepting it.
/// - A push that delivers nothing (``Push/deliversNothing``) goes through the queue, its
///   audience unchecked: it is stored, and its job finds no device.
/// - A push spread over time (`big_push_duration`) is fanned out batch by batch, whatever
///   its audience, each batch when its share of the time has come (``isSpread``); so is a
///   push the app's quiet hours or daily cap apply to (``Push/isDeliveryControlled``),
///   checked per device in each batch.
/// - With a message center in the same process, a group-committed explicit push of at
///   most ``maxAudienceFannedOutAtAcceptance`` names is fanned out in the statement that
///   accepts it and routed from that commit, without going through the queue.
public struct PushPath: Sendable, Hashable {
    /// Committed in a group commit (no cid, no replace).
    public var isGroupCommitted: Bool
    /// Fanned out whole in one statement (explicit audience, no badge).
    public var fansOutExplicitly: Bool
    /// Registration ids plus aliases named, for an explicit push.
    public var explicitAudienceSize: Int
    /// Fanned out evenly over ``Push/spreadMinutes``: its job is parked between batches.
    public var isSpread: Bool

    /// The longest explicit audience fanned out at acceptance.
    public static let maxAudienceFannedOutAtAcceptance = 20

    public init(_ push: Push) {
        let audience = push.audience
        isGroupCommitted = push.cid == nil && push.replace == nil
        isSpread = push.spreadMinutes != nil
        fansOutExplicitly =
            !isSpread && !push.isDeliveryControlled && !audience.all && audience.tags == nil && audience.tagsAnd == nil && audience.tagsNot == nil
            && (audience.registrationIDs == nil) != (audience.aliases == nil) && push.notification?.ios?.badge == nil
            && audience.timeZone == nil && audience.liveActivity == nil && !push.deliversNothing
        explicitAudienceSize = fansOutExplicitly ? (audience.registrationIDs?.count ?? 0) + (audience.aliases?.count ?? 0) : 0
    }

    /// The statement that stores the push checks its audience names a device; otherwise the
    /// API checks before accepting it.
    public var checksAudienceWhenStored: Bool { isGroupCommitted && fansOutExplicitly }

    /// Fanned out in the statement that accepts it, when a center runs in this process.
    public var fansOutAtAcceptance: Bool {
        checksAudienceWhenStored && explicitAudienceSize <= Self.maxAudienceFannedOutAtAcceptance
    }
}

extension Push {
    /// How this push travels (see ``PushPath``).
    public var path: PushPath { PushPath(self) }
}
