import Foundation
import HeraldCore

/// The message center running in the same process as the push API, which takes the pushes
/// this process accepts straight from the commit that stored them.
///
/// A push to a short explicit list of registration ids or aliases is fanned out in the
/// statement that accepts it: its copies are stored with their inbox numbers and its job
/// is committed already leased to this node (`node`, for `lease`) and fanned out to the
/// end. The acceptor then hands it to `receive`, and the center routes its copies, records
/// their outcomes and finishes the job. Nothing goes through the queue in between: no
/// NOTIFY, no claim, no second read of the message. The job row is what makes it durable:
/// if this process dies before the job is finished, its lease runs out and any center
/// takes it over, routing the copies still pending, as for any job whose worker died.
public struct LocalFanOut: Sendable {
    public var node: String
    public var lease: Duration
    /// The longest explicit audience (registration ids plus aliases) fanned out at
    /// acceptance; longer ones go through the queue.
    public var maxAudience: Int
    public var receive: @Sendable ([FannedOutPush]) -> Void

    public init(node: String, lease: Duration, maxAudience: Int = 20, receive: @escaping @Sendable ([FannedOutPush]) -> Void) {
        self.node = node
        self.lease = lease
        self.maxAudience = maxAudience
        self.receive = receive
    }

    /// Whether this push is fanned out in the statement that accepts it.
    func fansOutAtAcceptance(_ push: Push) -> Bool {
        guard HeraldStore.fansOutExplicitly(push) else { return false }
        return (push.audience.registrationIDs?.count ?? 0) + (push.audience.aliases?.count ?? 0) <= maxAudience
    }
}

/// A push fanned out when it was accepted: its job (leased to this node, fanned out to the
/// end), its message and the copies to route.
public struct FannedOutPush: Sendable {
    public var job: PushJob
    public var message: MessageRecord
    public var targets: [FanOutTarget]
    /// The payload stored in the inboxes (nil for a push not stored: time to live 0).
    public var devicePayload: [UInt8]?
}
