import Foundation
import HeraldCore
import HeraldStore
import Logging

/// Sends the SMS of `sms_message` (migration 0023's outbox): every poll it plans the
/// messages whose delay has run out (``CenterStore/planDueSMS(limit:)``), claims the SMS
/// due under a lease and sends each through the provider, unless its message was recalled
/// or replaced (cancelled) or its copy reached the device meanwhile (skipped). Each node
/// runs one; the claim's `SKIP LOCKED` keeps them apart, and one SMS claimed by a node that
/// died is claimed again when its lease runs out, with the same idempotency key.
struct SMSSender: Sendable {
    let store: CenterStore
    let configuration: CenterConfiguration
    let logger: Logger

    func run() async {
        while !Task.isCancelled {
            var busy = false
            do {
                // Numbers still in clear (from before migration 0023, or an import) are
                // sealed first, a batch per round, from the node's start on.
                busy = try await store.sealClearMobiles() > 0
                try await store.planDueSMS()
                let claimed = try await store.claimSMS(limit: 100, lease: configuration.smsLease)
                busy = busy || !claimed.isEmpty
                let providers = try await store.smsProviders(appIDs: Array(Set(claimed.map(\.appID))))
                try await store.finishSMS(await send(claimed, providers: providers))
            } catch {
                if Task.isCancelled { return }
                logger.warning("SMS fallback failed; trying again", metadata: ["error": "\(error)"])
            }
            if !busy { try? await Task.sleep(for: configuration.pollInterval) }
        }
    }

    /// Sends what is still to send, concurrently, each through its app's HTTP provider
    /// (`providers`) or else the node's default, and says what became of each.
    func send(_ claimed: [ClaimedSMS], providers: [Int64: SMSHTTPProviderConfiguration]) async -> [SMSUpdate] {
        await withTaskGroup(of: SMSUpdate.self) { group in
            for sms in claimed {
                let provider: (any SMSProvider)? =
                    providers[sms.appID].map { HTTPSMSProvider(configuration: $0, client: OutboundClient(rule: configuration.outbound)) }
                    ?? configuration.sms
                group.addTask { await self.send(sms, provider: provider) }
            }
            var updates: [SMSUpdate] = []
            for await update in group { updates.append(update) }
            return updates
        }
    }

    private func send(_ sms: ClaimedSMS, provider: (any SMSProvider)?) async -> SMSUpdate {
        func update(_ state: SMSUpdate.State, _ error: String? = nil, retryAt: Date? = nil) -> SMSUpdate {
            SMSUpdate(messageID: sms.messageID, deviceID: sms.deviceID, state: state, error: error, retryAt: retryAt)
        }
        if sms.isWithdrawn { return update(.cancelled) }
        if sms.isDelivered { return update(.skipped, "Delivered") }
        guard let mobile = sms.mobile else { return update(.skipped, "NoMobile") }
        guard let fallback = sms.fallback else { return update(.failed, "NoSMSMessage") }
        guard let provider else { return update(.failed, "NoSMSProvider") }
        let request = SMSRequest(
            appID: sms.appID,
            mobile: mobile,
            content: fallback.content,
            templateID: fallback.templateID,
            params: fallback.params,
            signID: fallback.signID,
            idempotencyKey: sms.idempotencyKey,
            msgID: sms.msgID
        )
        switch await provider.send(request) {
        case .sent:
            return update(.sent)
        case .rejected(let reason):
            logger.warning(
                "SMS refused",
                metadata: ["herald.msg_id": "\(sms.msgID)", "herald.mobile": "\(request.maskedMobile)", "reason": "\(reason)"]
            )
            return update(.failed, reason)
        case .retryLater(let reason):
            guard sms.attempt < configuration.smsMaxAttempts else { return update(.failed, reason) }
            let delay = configuration.smsRetryDelay * (1 << min(sms.attempt - 1, 10))
            return update(.pending, reason, retryAt: Date().addingTimeInterval(delay.seconds))
        }
    }
}
