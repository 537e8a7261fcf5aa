import Configuration
import HeraldCore

/// How webhooks and JPush callbacks are delivered (``WebhookDispatcher``,
/// ``CallbackWorker``).
public struct WebhookDelivery: Sendable {
    /// How long a batch (a callback request) is retried before it is given up
    /// (dead-lettered, the cursor moving on).
    public var retryFor: Duration = .seconds(86_400)
    /// First retry delay, doubling per failure up to `maxRetryDelay`.
    public var retryDelay: Duration = .seconds(1)
    public var maxRetryDelay: Duration = .seconds(300)
    /// How long one request may take, connecting included.
    public var timeout: Duration = .seconds(10)
    /// How often idle senders look for new events and due retries.
    public var pollInterval: Duration = .milliseconds(500)
    /// Events per webhook request.
    public var batch: Int = 100
    /// Endpoints sent to at once by this node, and callback requests in flight.
    public var concurrency: Int = 8

    public init() {}

    /// The settings `center.webhook*` (their keys kept where operators know them).
    public init(reader: ConfigReader) throws {
        let center = ConfigSection(reader, "center")
        retryFor = try center.seconds("webhookRetryFor", default: retryFor, in: 1...604_800)
        retryDelay = try center.milliseconds("webhookRetryDelayMs", default: retryDelay, in: 10...600_000)
        maxRetryDelay = try center.seconds("webhookMaxRetryDelay", default: maxRetryDelay, in: 1...86_400)
        timeout = try center.seconds("webhookTimeout", default: timeout, in: 1...120)
        pollInterval = try center.milliseconds("webhookPollIntervalMs", default: pollInterval, in: 10...60_000)
        batch = try center.int("webhookBatch", default: batch, in: 1...1000)
        concurrency = try center.int("webhookConcurrency", default: concurrency, in: 1...256)
    }
}
