import Foundation
import HeraldCore
import HeraldStore
import Logging

/// Sends JPush per-push callback requests from `callback_outbox`: claims due rows (SKIP
/// LOCKED, with a lease, so nodes share them), POSTs each, deletes it on a 2xx, backs off
/// on a failure, and keeps it as failed once ``WebhookDelivery/retryFor``
/// has passed since it was written. Each request is sent and recorded on its own (at most
/// `concurrency` in flight): a slow receiver holds only its own requests.
public struct CallbackWorker: Sendable {
    let store: EventStore
    let configuration: WebhookDelivery
    let poster: WebhookPoster
    let logger: Logger

    public init(store: EventStore, configuration: WebhookDelivery, outbound: OutboundAddressRule, logger: Logger) {
        self.store = store
        self.configuration = configuration
        self.poster = WebhookPoster(client: OutboundClient(rule: outbound), timeout: configuration.timeout)
        self.logger = logger
    }

    public func run() async {
        let loop = ClaimLoop<CallbackRequest>(
            width: configuration.concurrency,
            refill: max(1, configuration.concurrency / 4),
            pollInterval: configuration.pollInterval,
            // Leased for longer than a request may take, so no other node sends it meanwhile.
            claim: { [store, configuration] limit in try await store.claimCallbacks(limit: limit, lease: configuration.timeout * 3) },
            work: { request in await self.send(request) },
            failed: { [logger] error in logger.warning("cannot claim callbacks; trying again", metadata: ["error": "\(error)"]) }
        )
        await loop.run()
    }

    private func send(_ request: CallbackRequest) async {
        let result = await poster.post(request.url, body: Array(request.body.utf8), secret: nil)
        do {
            switch result {
            case .accepted:
                try await store.callbacksDelivered([request.id])
            case .refused(let status, let error):
                // Shutting down: cut short, not refused; sent again once its lease runs out.
                if Task.isCancelled { return }
                let giveUp = Date().timeIntervalSince(request.createdAt) >= configuration.retryFor.timeInterval
                let delay = WebhookDispatcher.backoff(failures: request.attempts, configuration: configuration)
                if giveUp { logger.warning("callback request given up", metadata: ["herald.callback_id": "\(request.id)", "error": "\(error)"]) }
                try await store.callbackFailed(
                    id: request.id,
                    status: status,
                    error: error,
                    retryAt: Date().addingTimeInterval(delay.timeInterval),
                    giveUp: giveUp
                )
            }
        } catch {
            // Its lease runs out and it is sent again.
            if !Task.isCancelled { logger.warning("cannot record a callback request", metadata: ["error": "\(error)"]) }
        }
    }
}
