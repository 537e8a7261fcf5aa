import Foundation
import HeraldCore
import HeraldStore
import Logging

/// Sends JPush per-push callback requests from `callback_outbox`: claims due rows (SKIP
/// LOCKED, with a lease, so nodes share them), POSTs each, deletes it on a 2xx, backs off
/// on a failure, and keeps it as failed once ``CenterConfiguration/WebhookDelivery/retryFor``
/// has passed since it was written.
struct CallbackWorker: Sendable {
    let store: EventStore
    let configuration: CenterConfiguration.WebhookDelivery
    let poster: WebhookPoster
    let logger: Logger

    init(store: EventStore, configuration: CenterConfiguration.WebhookDelivery, outbound: OutboundAddressRule, logger: Logger) {
        self.store = store
        self.configuration = configuration
        self.poster = WebhookPoster(client: OutboundClient(rule: outbound), timeout: configuration.timeout)
        self.logger = logger
    }

    func run() async {
        while !Task.isCancelled {
            var claimed: [CallbackRequest] = []
            do {
                // Leased for longer than a request may take, so no other node sends it meanwhile.
                claimed = try await store.claimCallbacks(limit: configuration.concurrency * 4, lease: configuration.timeout * 3)
                try await send(claimed)
            } catch {
                if Task.isCancelled { return }
                logger.warning("cannot send callbacks; trying again", metadata: ["error": "\(error)"])
            }
            if claimed.isEmpty { try? await Task.sleep(for: configuration.pollInterval) }
        }
    }

    private func send(_ requests: [CallbackRequest]) async throws {
        let results = await withTaskGroup(of: (CallbackRequest, WebhookPoster.Result).self) { group in
            var results: [(CallbackRequest, WebhookPoster.Result)] = []
            var next = requests.makeIterator()
            // At most `concurrency` requests in flight.
            for _ in 0..<configuration.concurrency {
                guard let request = next.next() else { break }
                group.addTask { (request, await poster.post(request.url, body: Array(request.body.utf8), secret: nil)) }
            }
            for await result in group {
                results.append(result)
                if let request = next.next() {
                    group.addTask { (request, await poster.post(request.url, body: Array(request.body.utf8), secret: nil)) }
                }
            }
            return results
        }
        try await store.callbacksDelivered(results.compactMap { if case .accepted = $0.1 { $0.0.id } else { nil } })
        for case (let request, .refused(let status, let error)) in results {
            let giveUp = Date().timeIntervalSince(request.createdAt) >= configuration.retryFor.seconds
            let delay = WebhookDispatcher.backoff(failures: request.attempts, configuration: configuration)
            if giveUp { logger.warning("callback request given up", metadata: ["herald.callback_id": "\(request.id)", "error": "\(error)"]) }
            try await store.callbackFailed(
                id: request.id,
                status: status,
                error: error,
                retryAt: Date().addingTimeInterval(delay.seconds),
                giveUp: giveUp
            )
        }
    }
}
