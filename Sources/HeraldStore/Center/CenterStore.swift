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
    static let jobsChannel = "herald_jobs"

    /// Listens for new jobs on one connection of the pool: calls `wake` once listening (a
    /// job committed before is not missed) and on every NOTIFY. Returns when the task is
    /// cancelled; throws when the connection is lost.
    public func listenForJobs(_ wake: @escaping @Sendable () -> Void) async throws {
        try await client.withConnection { connection in
            let notifications = try await connection.listen(Self.jobsChannel)
            wake()
            for try await _ in notifications { wake() }
        }
    }

    /// Listens for changed schedules (``APIStore/schedulesChannel``) as ``listenForJobs(_:)``
    /// listens for jobs.
    public func listenForSchedules(_ wake: @escaping @Sendable () -> Void) async throws {
        try await client.withConnection { connection in
            let notifications = try await connection.listen(APIStore.schedulesChannel)
            wake()
            for try await _ in notifications { wake() }
        }
    }
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
