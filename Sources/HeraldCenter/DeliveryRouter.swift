import Foundation
import HeraldAPNs
import HeraldCore
import HeraldGateway
import HeraldStore
import Logging
import NIOCore

/// Routes the copies of one message: over the MQTT connection to devices connected here
/// (and in the foreground), to the node that holds the connection of a device connected
/// elsewhere in the cluster (``NodeRouteWorker`` there does the rest), to APNs for
/// notifications no connection got acknowledged, otherwise left in the device's inbox for
/// its next connection.
struct DeliveryRouter: Sendable {
    let store: CenterStore
    let gateway: Gateway
    let apns: APNsDispatcher
    let configuration: CenterConfiguration
    let metrics: CenterMetrics
    let logger: Logger
    /// This node's cluster, when it has one: where devices not connected here are.
    let cluster: ClusterMembership?
    /// Records APNs outcomes as they come: those answered while a write is under way go
    /// together in the next one. True when the outcome was recorded.
    let recorder: GroupCommit<(messageID: Int64, update: DeliveryUpdate), Bool>
    /// Recall pushes sent lately: one per device and recall.
    let recentRecalls = RecentRecallPushes(window: .seconds(600))

    init(
        store: CenterStore,
        gateway: Gateway,
        apns: APNsDispatcher,
        configuration: CenterConfiguration,
        metrics: CenterMetrics,
        cluster: ClusterMembership?,
        logger: Logger
    ) {
        self.cluster = cluster
        self.store = store
        self.gateway = gateway
        self.apns = apns
        self.configuration = configuration
        self.metrics = metrics
        self.logger = logger
        self.recorder = GroupCommit(maxBatch: 1000, maxConcurrentCommits: 2) { outcomes in
            let byMessage = Dictionary(grouping: outcomes) { $0.messageID }.map { ($0.key, $0.value.map { $0.update }) }
            do {
                try await store.recordDeliveries(byMessage.map { (messageID: $0.0, updates: $0.1) })
                return Array(repeating: true, count: outcomes.count)
            } catch {
                logger.warning("Recording APNs outcomes failed; recorded with their batch", metadata: ["error": "\(error)"])
                return Array(repeating: false, count: outcomes.count)
            }
        }
    }

    /// A message prepared for routing: rendered once, shared by every batch (a class, so
    /// handing it around doesn't copy the message).
    final class Prepared: Sendable {
        let message: MessageRecord
        let devicePayload: ByteBuffer
        let apnsPayload: [UInt8]
        let hasNotification: Bool
        let stored: Bool

        /// What goes into the inboxes: the device payload when the message is stored (a
        /// time to live above 0), else nil.
        var storedPayload: [UInt8]? { stored ? Array(buffer: devicePayload) : nil }

        init(message: MessageRecord, devicePayload: ByteBuffer, apnsPayload: [UInt8], hasNotification: Bool, stored: Bool) {
            self.message = message
            self.devicePayload = devicePayload
            self.apnsPayload = apnsPayload
            self.hasNotification = hasNotification
            self.stored = stored
        }
    }

    /// `devicePayload`: the message as already rendered for the inboxes, if it was.
    func prepare(_ message: MessageRecord, devicePayload: [UInt8]? = nil) -> Prepared {
        Prepared(
            message: message,
            devicePayload: ByteBuffer(bytes: devicePayload ?? PushRendering.devicePayload(message.push, msgID: message.msgID)),
            // Only a notification ever goes to APNs.
            apnsPayload: message.push.notification == nil ? [] : PushRendering.apnsPayload(message.push, msgID: message.msgID),
            hasNotification: message.push.notification != nil,
            stored: message.push.timeToLive > 0
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
    /// don't wait for it: they go to APNs, or stay in the inbox, at once.
    ///
    /// Copies for devices connected to another node are routed there, and not among the
    /// outcomes: they stay pending until that node records theirs. `hops`: the nodes these
    /// copies came through already (a device that keeps moving is followed ``maxHops``
    /// times, then falls back here).
    func outcomes(of batches: [(prepared: Prepared, targets: [FanOutTarget])], hops: Int = 0) async throws -> [[DeliveryUpdate]] {
        var deliveries: [GatewayDelivery] = []
        var owners: [(batch: Int, target: FanOutTarget)] = []
        var elsewhere: [[FanOutTarget]] = Array(repeating: [], count: batches.count)
        for (index, (prepared, targets)) in batches.enumerated() {
            let message = prepared.message
            let gatewayMessage = GatewayMessage(
                msgID: message.msgID,
                payload: prepared.devicePayload,
                timeToLive: prepared.stored ? .seconds(max(1, Int64(message.expiresAt.timeIntervalSinceNow))) : .zero
            )
            for target in targets {
                if !(prepared.hasNotification && target.inBackground) && gateway.isConnected(target.registrationID) {
                    let device = DeviceIdentity(deviceID: target.deviceID, appID: message.appID, registrationID: target.registrationID)
                    deliveries.append(GatewayDelivery(message: gatewayMessage, device: device, seq: target.inboxSeq))
                    owners.append((index, target))
                } else {
                    elsewhere[index].append(target)
                }
            }
        }
        try await routeToPeers(batches, &elsewhere, hops: hops)
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

    /// What became of copies given the gateway's outcomes (none for a device it didn't
    /// try): acknowledged over the connection, else to APNs for a notification the device
    /// can get there, else waiting in the inbox (or expired, for a message not stored).
    private func updates(_ prepared: Prepared, targets: [FanOutTarget], outcomes: [Int64: DeliveryOutcome]) async -> [DeliveryUpdate] {
        var updates: [DeliveryUpdate] = []
        var fallbacks: [FanOutTarget] = []
        for target in targets {
            if outcomes[target.deviceID] == .acknowledged {
                updates.append(DeliveryUpdate(deviceID: target.deviceID, state: .tcp))
            } else if prepared.hasNotification, canUseAPNs(target, push: prepared.message.push) {
                fallbacks.append(target)
            } else {
                updates.append(DeliveryUpdate(deviceID: target.deviceID, state: prepared.stored ? .waiting : .expired))
            }
        }
        metrics.tcpDelivered(updates.count { $0.state == .tcp })
        return updates + (await sendToAPNs(prepared, targets: fallbacks, attempts: 0))
    }

    /// Sends notifications to APNs concurrently (the client's stream limits pace them) and
    /// records each answer as it comes, with the answers of the moment (``recorder``): a
    /// copy APNs took shows as sent at once, not when the slowest copy of its batch is
    /// answered (or times out), and a crash meanwhile doesn't send it again. Returns the
    /// outcomes that could not be recorded, for the caller to record with its own.
    func sendToAPNs(_ prepared: Prepared, targets: [FanOutTarget], attempts: Int) async -> [DeliveryUpdate] {
        guard !targets.isEmpty else { return [] }
        let messageID = prepared.message.id
        return await withTaskGroup(of: DeliveryUpdate?.self) { group in
            for target in targets {
                group.addTask {
                    let update = await self.sendToAPNs(prepared, target: target, attempts: attempts)
                    return await self.recorder.submit((messageID, update)) ? nil : update
                }
            }
            var unrecorded: [DeliveryUpdate] = []
            for await update in group {
                if let update { unrecorded.append(update) }
            }
            return unrecorded
        }
    }

    private func sendToAPNs(_ prepared: Prepared, target: FanOutTarget, attempts: Int) async -> DeliveryUpdate {
        let message = prepared.message
        let push = message.push
        let environment: APNsEnvironment =
            push.apnsProduction.map { $0 ? .production : .sandbox } ?? target.apnsEnvironment ?? .production
        let pushType: APNsPushType =
            switch push.pushType {
            case .alert: .alert
            case .background: .background
            case .voip: .voip
            }
        guard let token = push.pushType == .voip ? target.voipToken : target.apnsToken else {
            return DeliveryUpdate(deviceID: target.deviceID, state: prepared.stored ? .waiting : .expired)
        }
        let client: APNsClient?
        do {
            client = try await apns.client(appID: message.appID, environment: environment)
        } catch {
            logger.error("APNs client unavailable", metadata: ["herald.app_id": "\(message.appID)", "error": "\(error)"])
            return retry(target, reason: Self.clientUnavailable, attempts: attempts, prepared: prepared, attempted: false)
        }
        guard let client else {
            return DeliveryUpdate(deviceID: target.deviceID, state: prepared.stored ? .waiting : .expired)
        }
        // The device's badge is part of the payload only when the push sets or changes it
        // (a retry or a taken-over job reads the device's badge whatever the push).
        let badge = push.notification?.ios?.badge == nil ? nil : target.badge
        let payload = badge.map { PushRendering.apnsPayload(push, msgID: message.msgID, badge: $0) } ?? prepared.apnsPayload
        let notification = APNsNotification(
            deviceToken: token,
            pushType: pushType,
            payload: payload,
            priority: push.priority.flatMap { APNsPriority(rawValue: $0 == 1 ? 5 : $0) },
            expiration: push.timeToLive == 0 ? Date(timeIntervalSince1970: 0) : message.expiresAt,
            collapseID: message.identifier
        )
        do {
            let outcome = try await client.send(notification)
            metrics.apnsOutcome(outcome)
            switch outcome {
            case .delivered:
                return DeliveryUpdate(deviceID: target.deviceID, state: .apns, apnsAttempted: true)
            case .invalidToken(let reason, let since):
                try? await store.invalidateToken(deviceID: target.deviceID, token: token, since: since)
                return DeliveryUpdate(deviceID: target.deviceID, state: .failed, apnsReason: reason.rawValue, apnsAttempted: true)
            case .retryLater(let reason, let after):
                return retry(target, reason: reason.rawValue, attempts: attempts, prepared: prepared, after: after)
            case .circuitOpen(let reason, let after):
                // Nothing was sent: not an attempt.
                return retry(target, reason: reason.rawValue, attempts: attempts, prepared: prepared, after: after, attempted: false)
            case .credentialsBroken(let reason):
                await apns.credentialsRefused(by: client, appID: message.appID, environment: environment, reason: reason)
                return DeliveryUpdate(deviceID: target.deviceID, state: .failed, apnsReason: reason.rawValue, apnsAttempted: true)
            case .failed(let reason, _):
                return DeliveryUpdate(deviceID: target.deviceID, state: .failed, apnsReason: reason.rawValue, apnsAttempted: true)
            }
        } catch let error as APNsError {
            metrics.apnsError(error)
            guard error.isRetryable else {
                return DeliveryUpdate(deviceID: target.deviceID, state: .failed, apnsReason: error.reason, apnsAttempted: false)
            }
            return retry(target, reason: error.reason, attempts: attempts, prepared: prepared)
        } catch is CancellationError {
            return retry(target, reason: APNsError.shutdown.reason, attempts: attempts, prepared: prepared, attempted: false)
        } catch {
            logger.warning("APNs send failed", metadata: ["herald.app_id": "\(message.appID)", "error": "\(error)"])
            return retry(target, reason: Self.internalError, attempts: attempts, prepared: prepared, attempted: false)
        }
    }

    /// The copy is kept, waiting for its next APNs attempt, for as long as its time to live
    /// lasts: after `after` (APNs' or the client's word), or the center's backoff (doubling
    /// per attempt up to ``CenterConfiguration/apnsMaxRetryDelay``, less up to a fifth at
    /// random so copies refused together don't come back together), whichever is longer.
    /// `attempted`: a request went to APNs (a refusal by the open circuit is none).
    private func retry(
        _ target: FanOutTarget,
        reason: String,
        attempts: Int,
        prepared: Prepared,
        after: Duration? = nil,
        attempted: Bool = true
    ) -> DeliveryUpdate {
        let backoff = min(configuration.apnsRetryDelay * (1 << min(attempts, 20)), configuration.apnsMaxRetryDelay)
        let delay = max(after ?? .zero, backoff * (1 - 0.2 * Double.random(in: 0..<1)))
        let at = Date().addingTimeInterval(delay.seconds)
        guard at < prepared.message.expiresAt else {
            return DeliveryUpdate(deviceID: target.deviceID, state: .expired, apnsReason: reason, apnsAttempted: attempted)
        }
        return DeliveryUpdate(deviceID: target.deviceID, state: .waiting, apnsReason: reason, retryAt: at, apnsAttempted: attempted)
    }

    /// Herald's reason for a copy whose app's APNs client could not be made (the
    /// credentials could not be read).
    static let clientUnavailable = "ClientUnavailable"
    /// Herald's reason for a send that failed in an unforeseen way.
    static let internalError = "InternalError"

    private func canUseAPNs(_ target: FanOutTarget, push: Push) -> Bool {
        guard target.platform.usesAPNs, target.tokenValid else { return false }
        return push.pushType == .voip ? target.voipToken != nil : target.apnsToken != nil
    }
}

extension DeliveryRouter {
    /// APNs recall pushes: silent (content-available, priority 5, no alert), carrying
    /// every identifier still pending recall on the device; one per device even when the
    /// recall's jobs (one per recalled message) meet the device more than once.
    func sendRecalls(_ targets: [RecallTarget], appID: Int64, push: Push) async {
        await withTaskGroup(of: Void.self) { group in
            for recall in targets {
                let target = recall.target
                guard target.platform.usesAPNs, target.tokenValid, let token = target.apnsToken else { continue }
                guard recentRecalls.claim(deviceID: target.deviceID, token: token, identifiers: recall.identifiers, recalledAt: recall.recalledAt)
                else { continue }
                group.addTask {
                    let sent = await sendRecall(recall, token: token, appID: appID, push: push)
                    if !sent {
                        recentRecalls.release(deviceID: target.deviceID, token: token, identifiers: recall.identifiers, recalledAt: recall.recalledAt)
                    }
                }
            }
        }
    }

    /// Sends one recall push; false when APNs did not take it.
    private func sendRecall(_ recall: RecallTarget, token: String, appID: Int64, push: Push) async -> Bool {
        let target = recall.target
        let environment: APNsEnvironment =
            push.apnsProduction.map { $0 ? .production : .sandbox } ?? target.apnsEnvironment ?? .production
        guard let client = try? await apns.client(appID: appID, environment: environment) else { return false }
        guard let commandID = try? await store.newMsgID() else { return false }
        let notification = APNsNotification(
            deviceToken: token,
            pushType: .background,
            payload: PushRendering.apnsRecall(commandID: commandID, identifiers: recall.identifiers),
            priority: .powerConsiderate,
            expiration: Date().addingTimeInterval(configuration.recallWindow.seconds)
        )
        do {
            let outcome = try await client.send(notification)
            metrics.apnsOutcome(outcome)
            switch outcome {
            case .delivered:
                return true
            case .invalidToken(_, let since):
                try? await store.invalidateToken(deviceID: target.deviceID, token: token, since: since)
                return false
            case .credentialsBroken(let reason):
                await apns.credentialsRefused(by: client, appID: appID, environment: environment, reason: reason)
                return false
            case .retryLater, .circuitOpen, .failed:
                return false
            }
        } catch {
            logger.warning("APNs recall push failed", metadata: ["error": "\((error as? APNsError)?.reason ?? "\(error)")"])
            return false
        }
    }
}
