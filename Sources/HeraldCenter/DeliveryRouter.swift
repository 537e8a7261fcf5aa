import Foundation
import HeraldCore
import HeraldGateway
import HeraldRouting
import HeraldStore
import Logging
import NIOCore

/// Routes the copies of one message: over the MQTT connection to devices connected here
/// (and in the foreground), to the node that holds the connection of a device connected
/// elsewhere in the cluster (``NodeRouteWorker`` there does the rest), to the channel the
/// planner chooses (APNs, FCM) for what no connection got acknowledged, otherwise left in
/// the device's inbox for its next connection. Every choice is ``RoutePlanner``'s; this
/// only executes them.
struct DeliveryRouter: Sendable {
    let store: CenterStore
    let gateway: Gateway
    let configuration: CenterConfiguration
    let metrics: CenterMetrics
    let logger: Logger
    /// This node's cluster, when it has one: where devices not connected here are.
    let cluster: (any ClusterView)?
    /// Records the channels' outcomes as they come: those answered while a write is under way go
    /// together in the next one. True when the outcome was recorded.
    let recorder: GroupCommit<(messageID: Int64, update: DeliveryUpdate), Bool>
    /// Recall pushes sent lately: one per device and recall.
    let recentRecalls = RecentRecallPushes(window: .seconds(600))
    /// The channels beside MQTT, by name (``HeraldRouting/DeliveryChannel``).
    let channels: [String: any DeliveryChannel]

    init(
        store: CenterStore,
        gateway: Gateway,
        configuration: CenterConfiguration,
        metrics: CenterMetrics,
        cluster: (any ClusterView)?,
        channels: [any DeliveryChannel] = [],
        logger: Logger
    ) {
        self.channels = Dictionary(channels.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.cluster = cluster
        self.store = store
        self.gateway = gateway
        self.configuration = configuration
        self.metrics = metrics
        self.logger = logger
        self.recorder = GroupCommit(maxBatch: 1000, maxConcurrentCommits: 2) { outcomes in
            let byMessage = Dictionary(grouping: outcomes) { $0.messageID }.map { ($0.key, $0.value.map { $0.update }) }
            do {
                try await store.recordDeliveries(byMessage.map { (messageID: $0.0, updates: $0.1) })
                return Array(repeating: true, count: outcomes.count)
            } catch {
                logger.warning("Recording channel outcomes failed; recorded with their batch", metadata: ["error": "\(error)"])
                return Array(repeating: false, count: outcomes.count)
            }
        }
    }

    /// A message prepared for routing: rendered once, shared by every batch (a class, so
    /// handing it around doesn't copy the message).
    final class Prepared: Sendable {
        let message: MessageRecord
        let payloads: DevicePayloads
        /// The standard rendering, and the Android one when it differs.
        let devicePayload: ByteBuffer
        let androidPayload: ByteBuffer?
        /// What the route planner reads of it (``RoutePlanner``).
        let facts: MessageFacts
        /// Kept in the inboxes (a time to live above 0, not a Live Activity).
        var stored: Bool { facts.stored }
        /// Whether its copies' events are recorded: its app records every event, or it has
        /// a callback (migration 0018).
        let recordsEvents: Bool

        /// What goes into the inboxes: the device payloads when the message is stored (a
        /// time to live above 0), else nil.
        var storedPayload: DevicePayloads? { stored ? payloads : nil }

        init(message: MessageRecord, payloads: DevicePayloads, appRecordsEvents: Bool) {
            let push = message.push
            recordsEvents = appRecordsEvents || push.callback != nil
            self.message = message
            self.payloads = payloads
            devicePayload = ByteBuffer(bytes: payloads.standard)
            androidPayload = payloads.android.map { ByteBuffer(bytes: $0) }
            facts = MessageFacts(push)
        }
    }

    /// `devicePayloads`: the message as already rendered for the inboxes, if it was.
    func prepare(_ message: MessageRecord, devicePayloads: DevicePayloads? = nil) -> Prepared {
        Prepared(
            message: message,
            payloads: devicePayloads ?? PushRendering.devicePayloads(message.push, msgID: message.msgID),
            // The sets as last read: the center's tick keeps them fresh (``EventApps``).
            appRecordsEvents: store.eventApps.current.all.contains(message.appID)
        )
    }

    /// Routes a batch and records every outcome.
    func route(_ prepared: Prepared, targets: [FanOutTarget]) async throws {
        try await store.recordDeliveries(messageID: prepared.message.id, await outcomes(prepared, targets: targets))
    }

    /// Routes a batch and returns what became of each copy, to be recorded.
    func outcomes(_ prepared: Prepared, targets: [FanOutTarget]) async throws -> [DeliveryUpdate] {
        try await outcomes(of: [(prepared, targets)])[0]
    }

    /// Routes the batches of several messages (the small pushes of a claimed batch of
    /// jobs) and returns, per message, what became of each copy.
    ///
    /// The copies going over the MQTT connection go to the gateway in one call (one hop
    /// per event loop for the lot, not per push). Copies for devices without a connection
    /// don't wait for it: they go to their channel, or stay in the inbox, at once.
    ///
    /// Copies for devices connected to another node are routed there, and not among the
    /// outcomes: they stay pending until that node records theirs. `hops`: the nodes these
    /// copies came through already (a device that keeps moving is followed ``RoutePlanner/maxHops``
    /// times, then falls back here).
    func outcomes(of batches: [(prepared: Prepared, targets: [FanOutTarget])], hops: Int = 0) async throws -> [[DeliveryUpdate]] {
        var deliveries: [GatewayDelivery] = []
        var owners: [(batch: Int, target: FanOutTarget)] = []
        var elsewhere: [[FanOutTarget]] = Array(repeating: [], count: batches.count)
        var peerBound: [[FanOutTarget]] = Array(repeating: [], count: batches.count)
        let peers = cluster?.hasPeers == true && hops < RoutePlanner.maxHops
        for (index, (prepared, targets)) in batches.enumerated() {
            let message = prepared.message
            // Content per language: each connected device's copy rendered for it.
            let languages = prepared.message.push.isLocalized ? try await languages(of: targets) : nil
            let timeToLive: Duration = prepared.stored ? .seconds(max(1, Int64(message.expiresAt.timeIntervalSinceNow))) : .zero
            let gatewayMessage = GatewayMessage(msgID: message.msgID, payload: prepared.devicePayload, timeToLive: timeToLive)
            let androidMessage = prepared.androidPayload.map { GatewayMessage(msgID: message.msgID, payload: $0, timeToLive: timeToLive) }
            for target in targets {
                switch RoutePlanner.firstHop(prepared.facts, target.facts, connectedHere: gateway.isConnected(target.registrationID), peers: peers) {
                case .connection:
                    let device = DeviceIdentity(deviceID: target.deviceID, appID: message.appID, registrationID: target.registrationID)
                    var rendered = target.platform == .android ? androidMessage ?? gatewayMessage : gatewayMessage
                    if let languages, target.platform != .android || androidMessage == nil {
                        let payload = PushRendering.devicePayload(message.push.localized(for: languages[target.deviceID]), msgID: message.msgID)
                        rendered = GatewayMessage(msgID: message.msgID, payload: ByteBuffer(bytes: payload), timeToLive: timeToLive)
                    }
                    deliveries.append(GatewayDelivery(message: rendered, device: device, seq: target.inboxSeq))
                    owners.append((index, target))
                case .peer:
                    peerBound[index].append(target)
                case .fallback:
                    elsewhere[index].append(target)
                case .withheld:
                    continue
                }
            }
        }
        // Those no live peer holds fall back here.
        let unheld = try await routeToPeers(batches.map(\.prepared), peerBound, hops: hops)
        for index in elsewhere.indices { elsewhere[index] += unheld[index] }
        return try await withThrowingTaskGroup(of: (Int, [DeliveryUpdate]).self) { group in
            for (index, targets) in elsewhere.enumerated() where !targets.isEmpty {
                let prepared = batches[index].prepared
                group.addTask { (index, await self.updates(prepared, targets: targets, outcomes: [:])) }
            }
            if !deliveries.isEmpty {
                let results = try await gateway.send(deliveries, ackTimeout: configuration.ackTimeout)
                var sent: [[FanOutTarget]] = Array(repeating: [], count: batches.count)
                var outcomes: [[Int64: DeliveryOutcome]] = Array(repeating: [:], count: batches.count)
                for (owner, outcome) in zip(owners, results) {
                    sent[owner.batch].append(owner.target)
                    outcomes[owner.batch][owner.target.deviceID] = outcome
                }
                for (index, targets) in sent.enumerated() where !targets.isEmpty {
                    let prepared = batches[index].prepared
                    let outcomes = outcomes[index]
                    group.addTask { (index, await self.updates(prepared, targets: targets, outcomes: outcomes)) }
                }
            }
            var updates: [[DeliveryUpdate]] = Array(repeating: [], count: batches.count)
            for try await (index, batchUpdates) in group { updates[index] += batchUpdates }
            return updates
        }
    }

    /// The languages of the targets' devices (for a push with content per language).
    func languages(of targets: [FanOutTarget]) async throws -> [Int64: String] {
        try await store.deviceLanguages(targets.map(\.deviceID))
    }

    /// What became of copies given the gateway's outcomes (none for a device it didn't
    /// try): acknowledged over the connection, else to the channel the planner chooses for
    /// it (APNs, FCM), else waiting in the inbox (or expired, for a message not stored).
    private func updates(_ prepared: Prepared, targets: [FanOutTarget], outcomes: [Int64: DeliveryOutcome]) async -> [DeliveryUpdate] {
        var updates: [DeliveryUpdate] = []
        var routed: [Routed] = []
        for target in targets {
            let outcome = outcomes[target.deviceID]
            let route = RoutePlanner.fallback(prepared.facts, target.facts, acknowledged: outcome == .acknowledged)
            if route.channel != nil {
                routed.append((target, route))
                continue
            }
            switch route {
            case .delivered:
                updates.append(DeliveryUpdate(deviceID: target.deviceID, state: .tcp, event: prepared.event()))
            default:
                updates.append(
                    DeliveryUpdate(
                        deviceID: target.deviceID,
                        state: prepared.stored ? .waiting : .expired,
                        event: prepared.event(sentOverTCP: outcome == .noAcknowledgement)
                    )
                )
            }
        }
        metrics.tcpDelivered(updates.count { $0.state == .tcp })
        return updates + (await send(prepared, routed: routed, attempts: 0))
    }
}

extension DeliveryRouter.Prepared {
    /// What a copy's events add (nil when the message records none).
    func event(apnsID: UUID? = nil, apnsStatus: Int? = nil, sentOverTCP: Bool = false, channel: String? = nil) -> DeliveryUpdate.EventDetail? {
        recordsEvents ? DeliveryUpdate.EventDetail(apnsID: apnsID, apnsStatus: apnsStatus, sentOverTCP: sentOverTCP, channel: channel) : nil
    }
}

extension DeliveryRouter {
    /// Recall commands to devices without a connection, over the channel the planner
    /// chooses (a silent APNs push, an FCM data message), carrying every identifier still
    /// pending recall on the device; one per device even when the recall's jobs (one per
    /// recalled message) meet the device more than once.
    func sendRecalls(_ targets: [RecallTarget], appID: Int64, push: Push) async {
        let facts = MessageFacts(push)
        await withTaskGroup(of: Void.self) { group in
            for recall in targets {
                let target = recall.target
                guard let route = RoutePlanner.recallRoute(facts, target.facts), let name = route.channel, let channel = channels[name],
                    let token = target.token(forChannel: name)
                else { continue }
                guard recentRecalls.claim(deviceID: target.deviceID, token: token, identifiers: recall.identifiers, recalledAt: recall.recalledAt)
                else { continue }
                group.addTask {
                    if !(await sendRecall(recall, over: channel, route: route, token: token, appID: appID)) {
                        recentRecalls.release(deviceID: target.deviceID, token: token, identifiers: recall.identifiers, recalledAt: recall.recalledAt)
                    }
                }
            }
        }
    }

    /// Sends one recall command over a channel; false when it didn't take it.
    private func sendRecall(
        _ recall: RecallTarget,
        over channel: any DeliveryChannel,
        route: RoutePlanner.Route,
        token: String,
        appID: Int64
    )
        async -> Bool
    {
        guard let commandID = try? await store.newMsgID() else { return false }
        return await channel.sendRecall(
            ChannelRecall(
                appID: appID,
                deviceID: recall.target.deviceID,
                token: token,
                commandID: commandID,
                identifiers: recall.identifiers,
                expiresAt: Date().addingTimeInterval(configuration.recallWindow.timeInterval),
                route: route
            )
        )
    }
}
