import HeraldCore
import Logging

/// One node's store: the facade of each consumer over its pool. The API's commits are
/// durable; the gateway's and the center's are not waited for (see ``DeliveryPool``).
/// They share this node's cache of the pushes it accepted, so the center doesn't decode
/// again what the API just validated, and which apps record delivery events.
public struct HeraldStores: Sendable {
    public let api: APIStore
    public let center: CenterStore
    public let gateway: GatewayStore
    /// The node's membership of the cluster (delivery pool).
    public let cluster: ClusterStore
    /// The event log's readers: the event stream, webhooks and callbacks (``EventsPool``,
    /// or the durable pool when there is none).
    public let events: EventStore
    /// The maker of the node's message ids (durable pool), shared by the facades.
    public var msgIDs: MessageIDs { api.msgIDs }
    /// Which apps record delivery events, shared by the facades.
    public var eventApps: EventApps { api.eventApps }

    public init(durable: DurablePool, delivery: DeliveryPool, events: EventsPool? = nil, sealer: CredentialSealer, logger: Logger) {
        let recentPushes = RecentPushes()
        let msgIDs = MessageIDs(client: durable.client, logger: logger)
        let eventApps = EventApps(client: durable.client, logger: logger)
        api = APIStore(pool: durable, sealer: sealer, recentPushes: recentPushes, msgIDs: msgIDs, eventApps: eventApps, logger: logger)
        center = CenterStore(pool: delivery, sealer: sealer, recentPushes: recentPushes, msgIDs: msgIDs, eventApps: eventApps, logger: logger)
        gateway = GatewayStore(pool: delivery, sealer: sealer, recentPushes: recentPushes, msgIDs: msgIDs, eventApps: eventApps, logger: logger)
        cluster = ClusterStore(pool: delivery, sealer: sealer, recentPushes: recentPushes, msgIDs: msgIDs, eventApps: eventApps, logger: logger)
        self.events = EventStore(
            client: events?.client ?? durable.client,
            sealer: sealer,
            recentPushes: recentPushes,
            msgIDs: msgIDs,
            eventApps: eventApps,
            logger: logger
        )
    }
}
