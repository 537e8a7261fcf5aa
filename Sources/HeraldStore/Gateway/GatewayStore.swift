import HeraldCore
import Logging

/// The store as the device gateway uses it, on the delivery pool: device credentials,
/// inboxes and their replay, acknowledgements.
public struct GatewayStore: StoreFacade {
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

extension GatewayStore {
    /// Which apps record delivery events (shared by the node's facades).
    public var eventApps: EventApps { core.eventApps }
}
