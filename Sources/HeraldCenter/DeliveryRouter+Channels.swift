import Foundation
import HeraldCore
import HeraldRouting
import HeraldStore

extension DeliveryRouter {
    /// Sends copies over the channel the planner chose (by its name) and says what became
    /// of each: taken (the copy's state is the channel's name, its event `sent_<name>`),
    /// refused for good (failed, with the channel's reason), or kept for a retry with the
    /// channel's word on when. A copy whose app has no credentials for the channel, or
    /// whose node runs no such channel, waits in the inbox (or expires, if not stored).
    func send(_ prepared: Prepared, over name: String, targets: [FanOutTarget], attempts: Int) async -> [DeliveryUpdate] {
        guard !targets.isEmpty else { return [] }
        let unsent = { (target: FanOutTarget) in DeliveryUpdate(deviceID: target.deviceID, state: prepared.stored ? .waiting : .expired) }
        guard let channel = channels[name], let sentState = DeliveryUpdate.State(rawValue: name) else { return targets.map(unsent) }
        let message = prepared.message
        var sendable: [FanOutTarget] = []
        var updates: [DeliveryUpdate] = []
        for target in targets {
            if target.token(forChannel: name) != nil { sendable.append(target) } else { updates.append(unsent(target)) }
        }
        let copies = sendable.map { target in
            ChannelCopy(
                appID: message.appID,
                messageID: message.id,
                msgID: message.msgID,
                push: message.push,
                expiresAt: message.expiresAt,
                deviceID: target.deviceID,
                token: target.token(forChannel: name) ?? "",
                attempts: attempts
            )
        }
        let outcomes = await channel.send(copies)
        for (target, outcome) in zip(sendable, outcomes) {
            let event = prepared.event(channel: name)
            switch outcome {
            case .sent:
                updates.append(DeliveryUpdate(deviceID: target.deviceID, state: sentState, apnsAttempted: true, event: event))
            case .tokenDead(let reason), .failed(let reason):
                updates.append(DeliveryUpdate(deviceID: target.deviceID, state: .failed, apnsReason: reason, apnsAttempted: true, event: event))
            case .credentialsRefused(let reason, let attempted):
                updates.append(DeliveryUpdate(deviceID: target.deviceID, state: .failed, apnsReason: reason, apnsAttempted: attempted, event: event))
            case .retry(let reason, let after, let attempted):
                var update = retry(target, reason: reason, attempts: attempts, prepared: prepared, after: after, attempted: attempted)
                update.event = update.state == .expired ? event : nil
                updates.append(update)
            case .notConfigured:
                updates.append(unsent(target))
            }
        }
        return updates
    }
}
