import HeraldCore
import Logging
import PostgresNIO

/// The store as the Open API uses it, on the durable pool: apps and their credentials,
/// devices, aliases and tags, accepting and recalling pushes, reports, schedules. The
/// schedulers fire schedules through it too: a scheduled push is accepted as a push is.
///
/// Every operation is scoped to one app id, so one app can never read or change another's
/// devices. Domain failures (limits, unknown ids) are thrown as ``HeraldError`` and roll
/// the transaction back: a request either applies whole or not at all.
public struct APIStore: StoreFacade {
    let core: StoreCore

    init(pool: DurablePool, sealer: CredentialSealer, recentPushes: RecentPushes, msgIDs: MessageIDs, eventApps: EventApps, logger: Logger) {
        core = StoreCore(
            client: pool.client,
            sealer: sealer,
            recentPushes: recentPushes,
            msgIDs: msgIDs,
            eventApps: eventApps,
            logger: logger
        )
    }

    /// The facade over a core another facade has (a key's app is read as the API reads it).
    init(core: StoreCore) {
        self.core = core
    }

    /// Whether the database answers a trivial query.
    public func ping() async throws {
        try await client.query("SELECT 1", logger: logger)
    }
}

extension APIStore {
    /// Remembers a push this node accepted, validated, so that the center of this process
    /// reads it back without decoding its stored request (see ``RecentPushes``).
    public func remember(_ push: Push, msgID: String) {
        recentPushes.remember(push, msgID: msgID)
    }
}

extension APIStore {
    /// Which apps record delivery events (shared by the node's facades).
    public var eventApps: EventApps { core.eventApps }
}

extension APIStore {
    /// People: console users, their roles and sessions, and the two-person rule.
    public var people: PeopleStore { PeopleStore(core: core) }
}
