import Foundation
import HeraldCore
import HeraldRouting
import HeraldStore
import Logging
import NIOConcurrencyHelpers

extension DeliveryRouter {
    /// A copy the planner routed to a channel: its device, and the route (which names the
    /// channel, and for APNs the environment).
    typealias Routed = (target: FanOutTarget, route: RoutePlanner.Route)

    /// Sends copies over the channels the planner chose and records what became of each
    /// copy a request went out for as its channel reports it, with the reports of the
    /// moment (``recorder``): taken (the copy's state is the channel's name, its event
    /// `sent_<name>`), refused for good (failed, with the channel's reason), or kept for a
    /// retry. A copy whose node runs no such channel, or whose app has no credentials or
    /// device no token for it, waits in the inbox (or expires, if not stored). Returns the
    /// outcomes not recorded as they came (no request went out: a batch of copies without
    /// credentials is one write with the caller's, not one commit each), for the caller to
    /// record with its own.
    func send(_ prepared: Prepared, routed: [Routed], attempts: Int) async -> [DeliveryUpdate] {
        guard !routed.isEmpty else { return [] }
        let message = prepared.message
        // Content per language: each device's copy rendered for it (its default content
        // when its language can't be read now).
        var languages: [Int64: String] = [:]
        if message.push.isLocalized {
            do {
                languages = try await self.languages(of: routed.map(\.target))
            } catch {
                logger.warning("Could not read the devices' languages", metadata: ["error": "\(error)"])
            }
        }
        let shared = ChannelMessage(
            appID: message.appID,
            messageID: message.id,
            msgID: message.msgID,
            push: message.push,
            createdAt: message.createdAt,
            expiresAt: message.expiresAt,
            recordsEvents: prepared.recordsEvents
        )
        var unrouted: [DeliveryUpdate] = []
        var sends: [(channel: any DeliveryChannel, sent: DeliveryUpdate.State, targets: [FanOutTarget], copies: [ChannelCopy])] = []
        for (name, routed) in Dictionary(grouping: routed, by: { $0.route.channel ?? "" }) {
            guard let channel = channels[name], let sent = DeliveryUpdate.State(rawValue: name) else {
                // No such channel here: nothing sent (`sent` is not read for these).
                unrouted += routed.map { update(prepared, $0.target, .notConfigured, channel: name, sent: .failed, attempts: attempts) }
                continue
            }
            let copies = routed.map { target, route in
                ChannelCopy(
                    message: shared,
                    deviceID: target.deviceID,
                    token: target.token(forChannel: name),
                    voipToken: target.voipToken,
                    badge: target.badge,
                    language: languages[target.deviceID],
                    route: route,
                    attempts: attempts
                )
            }
            sends.append((channel, sent, routed.map(\.target), copies))
        }
        let unrecorded = NIOLockedValueBox<[DeliveryUpdate]>([])
        await withTaskGroup(of: Void.self) { group in
            for (channel, sent, targets, copies) in sends {
                group.addTask {
                    await channel.send(copies) { index, outcome in
                        let update = self.update(prepared, targets[index], outcome, channel: channel.name, sent: sent, attempts: attempts)
                        guard outcome.requestWentOut, await self.recorder.submit((message.id, update)) else {
                            unrecorded.withLockedValue { $0.append(update) }
                            return
                        }
                    }
                }
            }
        }
        return unrouted + unrecorded.withLockedValue { $0 }
    }

    /// What a channel's outcome makes of a copy.
    private func update(
        _ prepared: Prepared,
        _ target: FanOutTarget,
        _ outcome: ChannelOutcome,
        channel: String,
        sent: DeliveryUpdate.State,
        attempts: Int
    ) -> DeliveryUpdate {
        let deviceID = target.deviceID
        var update: DeliveryUpdate
        var receipt = ChannelReceipt.none
        switch outcome {
        case .sent(let answer):
            receipt = answer
            update = DeliveryUpdate(deviceID: deviceID, state: sent, apnsAttempted: true)
        case .tokenDead(let reason, let answer):
            receipt = answer
            update = DeliveryUpdate(deviceID: deviceID, state: .failed, apnsReason: reason, apnsAttempted: true)
        case .failed(let reason, let attempted, let answer):
            receipt = answer
            update = DeliveryUpdate(deviceID: deviceID, state: .failed, apnsReason: reason, apnsAttempted: attempted)
        case .credentialsRefused(let reason, let attempted):
            update = DeliveryUpdate(deviceID: deviceID, state: .failed, apnsReason: reason, apnsAttempted: attempted)
        case .retry(let reason, let after, let attempted):
            update = retry(target, reason: reason, attempts: attempts, prepared: prepared, after: after, attempted: attempted)
        case .notConfigured:
            update = DeliveryUpdate(deviceID: deviceID, state: prepared.stored ? .waiting : .expired)
        }
        update.event = prepared.event(apnsID: receipt.requestID, apnsStatus: receipt.status, channel: channel)
        return update
    }

    /// The copy is kept, waiting for its channel's next attempt, for as long as its time to
    /// live lasts: after `after` (the service's or its client's word), or the center's
    /// backoff (doubling per attempt up to ``CenterConfiguration/maxRetryDelay``, less up to
    /// a fifth at random so copies refused together don't come back together), whichever
    /// is longer. `attempted`: a request went out (a refusal by an open circuit is none).
    func retry(
        _ target: FanOutTarget,
        reason: String,
        attempts: Int,
        prepared: Prepared,
        after: Duration? = nil,
        attempted: Bool = true
    ) -> DeliveryUpdate {
        let backoff = min(configuration.retryDelay * (1 << min(attempts, 20)), configuration.maxRetryDelay)
        let delay = max(after ?? .zero, backoff * (1 - 0.2 * Double.random(in: 0..<1)))
        let at = Date().addingTimeInterval(delay.timeInterval)
        guard at < prepared.message.expiresAt else {
            return DeliveryUpdate(deviceID: target.deviceID, state: .expired, apnsReason: reason, apnsAttempted: attempted)
        }
        return DeliveryUpdate(deviceID: target.deviceID, state: .waiting, apnsReason: reason, retryAt: at, apnsAttempted: attempted)
    }
}

extension FanOutTarget {
    /// What the route planner reads of the copy's device.
    var facts: DeviceFacts {
        DeviceFacts(
            platform: platform,
            hasAPNsToken: apnsToken != nil,
            hasVoIPToken: voipToken != nil,
            hasFCMToken: fcmToken != nil,
            tokenValid: tokenValid,
            apnsEnvironment: apnsEnvironment,
            inBackground: inBackground,
            isWithheld: isWithheld
        )
    }
}
