import HeraldAPI
import HeraldAPNs
import HeraldCenter
import HeraldCore
import HeraldGateway
import HeraldSMS
import HeraldStore
import HeraldWebhooks

/// The configuration of a whole node: each component's, and what they share.
public struct HeraldNodeConfiguration: Sendable {
    /// Where the database is and how the node's two pools use it.
    public struct Database: Sendable {
        public var url: DatabaseURL
        /// Connections of the API's pool (durable commits).
        public var poolSize: Int
        /// Connections of the gateway and message center's pool.
        public var deliveryPoolSize: Int
        /// Connections of the event log's readers: the event stream, webhooks, callbacks.
        public var eventsPoolSize: Int
        /// How long one connection attempt may take.
        public var connectTimeout: Duration
        /// Whether an API request stuck on a database that is down is answered 503 after
        /// ``APIConfiguration/databaseWait`` (checked with a fresh connection).
        public var boundedWait: Bool

        public init(
            url: DatabaseURL,
            poolSize: Int = 20,
            deliveryPoolSize: Int? = nil,
            eventsPoolSize: Int = 4,
            connectTimeout: Duration = .seconds(5),
            boundedWait: Bool = true
        ) {
            self.url = url
            self.poolSize = poolSize
            self.deliveryPoolSize = deliveryPoolSize ?? poolSize
            self.eventsPoolSize = eventsPoolSize
            self.connectTimeout = connectTimeout
            self.boundedWait = boundedWait
        }
    }

    public var database: Database
    /// What the components share (node id, recall window): ``HeraldNode`` sets it on each
    /// of them, whatever their own configuration says.
    public var node: NodeConfiguration
    public var api: APIConfiguration
    public var gateway: GatewayConfiguration
    public var center: CenterConfiguration
    /// The APNs channel: where its traffic goes (Apple unless a local sandbox is named), its
    /// connections, deadline and circuit breaker.
    public var apns = APNsChannelConfiguration()
    /// Where FCM traffic goes (Google unless a local sandbox is named).
    public var fcm: FCMRouting = .google
    /// The SMS fallback: the provider of apps without their own, attempts, lease.
    public var sms = SMSConfiguration()
    /// Webhook and callback delivery.
    public var webhooks = WebhookDelivery()

    public init(
        database: Database,
        node: NodeConfiguration = NodeConfiguration(),
        api: APIConfiguration,
        gateway: GatewayConfiguration = GatewayConfiguration(),
        center: CenterConfiguration = CenterConfiguration()
    ) {
        self.database = database
        self.node = node
        self.api = api
        self.gateway = gateway
        self.center = center
    }

    /// The components' configurations with the shared settings applied.
    var resolved: (api: APIConfiguration, gateway: GatewayConfiguration, center: CenterConfiguration) {
        var api = api
        var center = center
        var gateway = gateway
        center.nodeID = node.nodeID
        gateway.nodeID = node.nodeID
        gateway.drainRate = node.cluster.drainRate
        api.recallWindow = node.recallWindow
        center.recallWindow = node.recallWindow
        api.outbound = node.outbound
        center.outbound = node.outbound
        if database.boundedWait { api.databaseURL = database.url }
        // The console tries APNs credentials where the center will use them.
        let dryRun = APNsDryRun(routing: apns.routing)
        api.apnsCheck = { await dryRun.refusal(of: $0) }
        return (api, gateway, center)
    }
}
