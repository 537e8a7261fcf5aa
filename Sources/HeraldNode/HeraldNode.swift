import Foundation
import HeraldAPI
import HeraldAPNs
import HeraldCenter
import HeraldCore
import HeraldGateway
import HeraldSMS
import HeraldStore
import HeraldWebhooks
import Hummingbird
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle

/// One whole Herald node, wired from its configuration: the store's two pools and its
/// facades, the device gateway, the message center and the HTTP API. This is the only
/// place the graph is built: `herald serve`, `herald-bench` and the end-to-end tests all
/// call ``init(_:sealer:registry:services:faults:onListening:onDeviceEvent:logger:)``.
///
/// ```
/// API ──(accept: message + job, one commit)──▶ durable pool ─▶ PostgreSQL
/// Scheduler ──(due schedule: claim, accept its push, record the run: one commit)──┘
///  └─ fanned out at acceptance ─▶ MessageCenter ◀─ NOTIFY / claim ─ delivery pool
///                                   ├─▶ Gateway (MQTT) ─▶ device
///                                   └─▶ channels: APNs, FCM
/// ```
///
/// Running ``application`` runs everything: the pools, the gateway and the center are its
/// services, started before it listens and stopped after it, in a graceful shutdown.
public struct HeraldNode: Sendable {
    /// The store's facades: the API's on the durable pool, the gateway's and the center's
    /// on the delivery pool.
    public let stores: HeraldStores
    public let gateway: Gateway
    public let center: MessageCenter
    /// Fires the schedules of every app (each node runs one; they share the work).
    public let scheduler: Scheduler
    /// The node's part in its cluster.
    public let membership: ClusterMembership
    /// The HTTP application, with every other service of the node.
    public let application: any ApplicationProtocol
    /// Fails the node's readiness when it is told to stop, before anything stops.
    public let drainGate: DrainGate

    /// What to run: the application (and through it every other service), then the drain
    /// gate, whose graceful shutdown comes first.
    public var services: [any Service] { [application, drainGate] }

    /// Wires a node. Nothing runs until ``application`` does.
    /// - Parameters:
    ///   - sealer: seals and opens the APNs credentials stored in the database.
    ///   - services: more services to run with the node (a local APNs sandbox).
    ///   - faults: faults a test injects into the center.
    ///   - onListening: called once the HTTP API and the gateway listen, with their ports.
    ///   - onDeviceEvent: also told of every event a device publishes (the center records
    ///     them in any case).
    public init(
        _ configuration: HeraldNodeConfiguration,
        sealer: CredentialSealer,
        registry: PrometheusCollectorRegistry,
        services: [any Service] = [],
        faults: CenterFaults = CenterFaults(),
        onListening: @escaping @Sendable (ListeningPorts) async -> Void = { _ in },
        onDeviceEvent: (@Sendable (DeviceIdentity, ByteBuffer) -> Void)? = nil,
        logger: Logger
    ) {
        let database = configuration.database
        var (api, gatewayConfiguration, centerConfiguration) = configuration.resolved
        let durable = DurablePool(
            url: database.url,
            maximumConnections: database.poolSize,
            connectTimeout: database.connectTimeout,
            logger: logger
        )
        let delivery = DeliveryPool(
            url: database.url,
            maximumConnections: database.deliveryPoolSize,
            connectTimeout: database.connectTimeout,
            logger: logger
        )
        // The event log's readers (stream, webhooks, callbacks) have connections of their own.
        let eventsPool = EventsPool(
            url: database.url,
            maximumConnections: database.eventsPoolSize,
            connectTimeout: database.connectTimeout,
            logger: logger
        )
        let stores = HeraldStores(durable: durable, delivery: delivery, events: eventsPool, sealer: sealer, logger: logger)
        // The node's one LISTEN connection: the center, the scheduler and the membership
        // subscribe to their channels on it.
        let listener = DatabaseListener(url: database.url, connectTimeout: database.connectTimeout, logger: logger)
        let events = DeviceEvents(store: stores.center, logger: logger)
        let joined = AsyncStream.makeStream(of: Void.self)
        let gateway = Gateway(
            configuration: gatewayConfiguration,
            store: stores.gateway,
            onDeviceEvent: { device, payload in
                onDeviceEvent?(device, payload)
                events.receive(device, payload)
            },
            beforeListening: { for await _ in joined.stream {} },
            logger: logger
        )
        let membership = ClusterMembership(
            node: configuration.node.nodeID,
            configuration: configuration.node.cluster,
            store: stores.cluster,
            gateway: gateway,
            joined: joined.continuation,
            probe: DirectContactProbe(url: database.url, logger: logger),
            listener: listener,
            logger: logger
        )
        // The channels beside MQTT (issue #32): APNs and FCM.
        let apns = APNsChannel(configuration: configuration.apns, store: stores.center.apns, logger: logger)
        let fcm = FCMService(routing: configuration.fcm, store: stores.center.fcm, logger: logger)
        api.fcmCheck = { await fcm.refusal(of: $0) }
        let center = MessageCenter(
            configuration: centerConfiguration,
            store: stores.center,
            gateway: gateway,
            faults: faults,
            cluster: membership,
            channels: [apns, fcm.channel],
            jobNotices: listener.subscribe(CenterStore.jobsChannel),
            logger: logger
        )
        let scheduler = Scheduler(
            configuration: centerConfiguration,
            store: stores.api,
            changes: listener.subscribe(ScheduleStore.schedulesChannel),
            logger: logger
        )
        // Webhooks and callbacks, from the event log.
        let eventDelivery = EventDeliveryService(
            store: stores.events,
            node: configuration.node.nodeID,
            configuration: configuration.webhooks,
            outbound: centerConfiguration.outbound,
            logger: logger
        )
        // The SMS fallback, on the center's outbox.
        let sms = SMSService(
            sender: SMSSender(
                store: stores.center.sms,
                configuration: configuration.sms,
                pollInterval: centerConfiguration.pollInterval,
                outbound: OutboundClient(rule: centerConfiguration.outbound),
                logger: logger
            )
        )
        // The housekeeping, one node at a time.
        let purge = PurgeService(store: stores.center.purge, cluster: membership, configuration: centerConfiguration, logger: logger)
        // The console's dashboard draws these.
        let figures = NodeFigures(
            node: configuration.node.nodeID,
            registry: registry,
            store: stores.cluster,
            interval: NodeFigures.interval,
            logger: logger
        )
        self.scheduler = scheduler
        self.stores = stores
        self.membership = membership
        self.drainGate = DrainGate(membership: membership, delay: configuration.node.cluster.drainDelay, logger: logger)
        self.gateway = gateway
        self.center = center
        self.application = buildApplication(
            configuration: api,
            store: stores.api,
            events: stores.events,
            registry: registry,
            // Shut down in reverse: the center finishes what it claimed (its retries and held
            // copies stop first), the channels close, the gateway closes its connections, the
            // devices' last events are recorded, the node leaves the cluster, the LISTEN
            // connection and the pools close.
            services: [durable, delivery, eventsPool, listener, membership, events, gateway, apns, fcm] + services
                + [center, center.retries, center.heldCopies, sms, eventDelivery, scheduler, purge, figures],
            fannedOutPushes: center,
            outbound: OutboundClient(rule: centerConfiguration.outbound),
            draining: { membership.isDraining },
            onServerRunning: { channel in
                let http = channel.localAddress?.port ?? configuration.api.port
                membership.advertise(
                    httpAddress: configuration.node.cluster.advertisedAddress(
                        listeningOn: configuration.api.host,
                        port: http,
                        hostName: ProcessInfo.processInfo.hostName
                    )
                )
                let mqtt = (try? await gateway.localAddress.port) ?? configuration.gateway.port
                await onListening(ListeningPorts(http: http, mqtt: mqtt))
            },
            logger: logger
        )
    }
}

/// The ports a node listens on (useful when it was configured with port 0).
public struct ListeningPorts: Sendable, Hashable {
    /// The HTTP API's.
    public var http: Int
    /// The device gateway's plain MQTT listener's.
    public var mqtt: Int
}
