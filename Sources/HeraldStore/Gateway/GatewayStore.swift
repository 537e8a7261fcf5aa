import HeraldCore
import Logging

/// The store as the device gateway uses it, on the delivery pool: device credentials,
/// inboxes and their replay, acknowledgements.
public struct GatewayStore: StoreFacade {
    let core: StoreCore

    init(pool: DeliveryPool, sealer: CredentialSealer, recentPushes: RecentPushes, msgIDs: MessageIDs, logger: Logger) {
        core = StoreCore(client: pool.client, sealer: sealer, recentPushes: recentPushes, msgIDs: msgIDs, logger: logger)
    }
}
