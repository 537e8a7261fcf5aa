import HeraldCore
import Logging
import PostgresNIO

/// The store as the message center uses it, on the delivery pool: the job queue and its
/// leases, fan-out into inboxes, delivery outcomes, APNs retries and credentials, recall
/// commands, purges, and the wake-ups of the queue.
public struct CenterStore: StoreFacade {
    let core: StoreCore

    init(pool: DeliveryPool, sealer: CredentialSealer, recentPushes: RecentPushes, msgIDs: MessageIDs, eventApps: EventApps, logger: Logger) {
        core = StoreCore(
            client: pool.client,
            sealer: sealer,
            recentPushes: recentPushes,
            msgIDs: msgIDs,
            eventApps: eventApps,
            logger: logger
        )
    }
}

extension CenterStore {
    /// The channel workers LISTEN on; a committed job NOTIFYs it.
    public static let jobsChannel = "herald_jobs"
}

extension CenterStore {
    /// A new message id (``MessageIDs``), for a command sent to devices (a recall).
    public func newMsgID() async throws -> String {
        try await msgIDs.next()
    }
}

extension CenterStore {
    /// Which apps record delivery events (shared by the node's facades).
    public var eventApps: EventApps { core.eventApps }
}
