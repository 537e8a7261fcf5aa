import Foundation
import HeraldCore
import HeraldStore
import Logging
import NIOConcurrencyHelpers

/// Sends each app webhook its events, in order: a node claims an endpoint (a lease, so one
/// node at a time sends to it), reads the events after its cursor, POSTs them in batches,
/// and moves the cursor after a 2xx only. A failing batch is retried with exponential
/// backoff for ``WebhookDelivery/retryFor``, then recorded in
/// `webhook_failures` and passed over. It runs on the events pool, apart from delivery.
public struct WebhookDispatcher: Sendable {
    let store: EventStore
    let node: String
    let configuration: WebhookDelivery
    let poster: WebhookPoster
    let logger: Logger
    /// The webhooks this node is sending to now; any other it holds a lease on is stale.
    private let sending = NIOLockedValueBox<Set<Int64>>([])

    /// A node's hold on an endpoint, renewed between batches: longer than a request may
    /// take. A node declared dead gives its endpoints up at once (``ClusterStore``).
    var lease: Duration { max(.seconds(60), configuration.timeout * 2) }
    /// Batches sent to one endpoint before it is given back (others may be waiting).
    static let batchesPerClaim = 50

    public init(
        store: EventStore,
        node: String,
        configuration: WebhookDelivery,
        outbound: OutboundAddressRule,
        logger: Logger
    ) {
        self.store = store
        self.node = node
        self.configuration = configuration
        self.poster = WebhookPoster(client: OutboundClient(rule: outbound), timeout: configuration.timeout)
        self.logger = logger
    }

    /// Claims endpoints and sends to them until cancelled, each endpoint in a task of its
    /// own: a slow or hung receiver holds its own slot of `concurrency`, and the others are
    /// claimed and sent to meanwhile.
    public func run() async {
        let loop = ClaimLoop<ClaimedWebhook>(
            width: configuration.concurrency,
            pollInterval: configuration.pollInterval,
            claim: { [store, node, lease, sending] limit in
                try await store.claimWebhooks(node: node, lease: lease, limit: limit, sending: sending.withLockedValue { Array($0) })
            },
            // Counted as being sent once the loop has taken it, not from inside the claim: a
            // claim the loop gave up on (a statement cut off by an outage) may still end, and
            // what it took, marked as being sent by nobody, waited out its lease (60 s)
            // instead of being claimed again at once.
            taken: { [sending] webhook in sending.withLockedValue { _ = $0.insert(webhook.id) } },
            work: { [sending] webhook in
                await self.send(webhook)
                sending.withLockedValue { _ = $0.remove(webhook.id) }
            },
            failed: { [logger] error in logger.warning("cannot claim webhooks; trying again", metadata: ["error": "\(error)"]) }
        )
        await loop.run()
    }

    /// Sends an endpoint's pending events, batch after batch, then gives it back.
    func send(_ webhook: ClaimedWebhook) async {
        var logger = logger
        logger[metadataKey: "herald.webhook_id"] = "\(webhook.id)"
        var cursor = webhook.cursor
        var failures = webhook.failures
        var failingSince = webhook.failingSince
        do {
            for _ in 0..<Self.batchesPerClaim where !Task.isCancelled {
                let page = try await store.events(appID: webhook.appID, after: cursor, types: webhook.types, limit: configuration.batch)
                guard !page.events.isEmpty else {
                    if page.cursor > cursor { _ = try await store.webhookAdvanced(id: webhook.id, node: node, to: page.cursor, delivered: 0) }
                    break
                }
                let result = await poster.post(webhook.url, body: DeliveryEvent.batchBody(page.events), secret: webhook.secret)
                switch result {
                case .accepted:
                    guard try await store.webhookAdvanced(id: webhook.id, node: node, to: page.cursor, delivered: page.events.count) else {
                        return  // Another node took it over (this one was too slow): it sends from the stored cursor.
                    }
                    cursor = page.cursor
                    failures = 0
                    failingSince = nil
                case .refused(let status, let error):
                    // Shutting down: the request was cut short, not refused; the endpoint is given back.
                    if Task.isCancelled { throw CancellationError() }
                    let since = failingSince ?? Date()
                    if Date().timeIntervalSince(since) >= configuration.retryFor.timeInterval {
                        logger.warning("webhook batch given up", metadata: ["herald.events": "\(page.events.count)", "error": "\(error)"])
                        try await store.webhookGaveUp(id: webhook.id, node: node, events: page.events, status: status, error: error)
                        cursor = page.events[page.events.count - 1].cursor
                        failures = 0
                        failingSince = nil
                        continue
                    }
                    let delay = Self.backoff(failures: failures, configuration: configuration)
                    try await store.webhookFailed(
                        id: webhook.id,
                        node: node,
                        status: status,
                        error: error,
                        retryAt: Date().addingTimeInterval(delay.timeInterval)
                    )
                    logger.debug("webhook request failed", metadata: ["error": "\(error)", "herald.failures": "\(failures + 1)"])
                    return
                }
                guard try await store.renewWebhook(id: webhook.id, node: node, lease: lease) else { return }
            }
            try await store.releaseWebhook(id: webhook.id, node: node)
        } catch {
            if !Task.isCancelled { logger.warning("webhook dispatch failed; the endpoint is retried", metadata: ["error": "\(error)"]) }
            try? await store.releaseWebhook(id: webhook.id, node: node)
        }
    }

    /// The wait after the `failures`+1-th failure: the first delay doubled per failure, up to
    /// the longest, less up to a fifth at random (endpoints that failed together don't all
    /// come back together).
    static func backoff(failures: Int, configuration: WebhookDelivery) -> Duration {
        let delay = min(configuration.retryDelay * (1 << min(failures, 20)), configuration.maxRetryDelay)
        return delay * (1 - 0.2 * Double.random(in: 0..<1))
    }
}
