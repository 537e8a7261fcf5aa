import Foundation
import HeraldCore

/// An app's webhook endpoint, as the admin API shows it (never its secret).
public struct Webhook: Sendable, Hashable {
    public var id: Int64
    public var url: String
    /// The event types sent; empty for all.
    public var types: [DeliveryEventType]
    public var enabled: Bool
    public var createdAt: Date
    public var cursor: EventCursor
    /// Events of its types after its cursor (counted up to ``lagBound``).
    public var lag: Int
    /// Events delivered (answered 2xx) so far.
    public var delivered: Int64
    public var lastSuccessAt: Date?
    public var lastFailure: Failure?
    /// Failed attempts of the batch at the cursor.
    public var consecutiveFailures: Int
    /// When the batch at the cursor is tried again, while it is failing.
    public var retryAt: Date?

    public struct Failure: Sendable, Hashable {
        /// The HTTP status, nil when no answer came (the error says why).
        public var status: Int?
        public var error: String?
        public var at: Date
    }

    /// The most events ``lag`` counts.
    public static let lagBound = 100_000
}

/// A batch a webhook gave up on (``EventStore/webhookFailures(appID:webhookID:)``).
public struct WebhookFailure: Sendable, Hashable {
    public var id: Int64
    public var firstEventID: Int64
    public var lastEventID: Int64
    public var events: Int
    public var attempts: Int
    public var status: Int?
    public var error: String?
    public var firstAttemptAt: Date?
    public var failedAt: Date
}

/// A webhook claimed by this node's dispatcher, with its secret in clear.
public struct ClaimedWebhook: Sendable {
    public var id: Int64
    public var appID: Int64
    public var url: String
    public var types: [DeliveryEventType]
    public var secret: String
    public var cursor: EventCursor
    public var failures: Int
    public var failingSince: Date?
}
