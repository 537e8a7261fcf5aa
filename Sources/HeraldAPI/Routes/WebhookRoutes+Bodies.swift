import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

struct CreateWebhookRequest: Decodable {
    var url: String
    /// Event types to send; all when absent or empty.
    var types: [String]?
}

struct WebhookResponse: ResponseEncodable {
    struct Failure: Encodable {
        var status: Int?
        var error: String?
        var at: Date
    }

    var id: Int64
    var url: String
    var types: [String]
    var enabled: Bool
    var createdAt: Date
    var cursor: String
    /// Events of its types not delivered yet (counted up to 100,000).
    var lag: Int
    var delivered: Int64
    var lastSuccessAt: Date?
    var lastFailure: Failure?
    var consecutiveFailures: Int
    var retryAt: Date?

    init(_ webhook: Webhook) {
        id = webhook.id
        url = webhook.url
        types = webhook.types.map(\.rawValue)
        enabled = webhook.enabled
        createdAt = webhook.createdAt
        cursor = webhook.cursor.description
        lag = webhook.lag
        delivered = webhook.delivered
        lastSuccessAt = webhook.lastSuccessAt
        lastFailure = webhook.lastFailure.map { Failure(status: $0.status, error: $0.error, at: $0.at) }
        consecutiveFailures = webhook.consecutiveFailures
        retryAt = webhook.retryAt
    }
}

struct WebhookCreatedResponse: ResponseEncodable {
    var webhook: WebhookResponse
    /// The signing secret: shown this once.
    var secret: String
}

struct WebhooksResponse: ResponseEncodable {
    var webhooks: [WebhookResponse]
}

struct WebhookTestResponse: ResponseEncodable {
    var delivered: Bool
    var status: Int?
    var error: String?
    var milliseconds: Int
}

struct WebhookFailureResponse: Encodable {
    var id: Int64
    var firstEventId: Int64
    var lastEventId: Int64
    var events: Int
    var attempts: Int
    var status: Int?
    var error: String?
    var firstAttemptAt: Date?
    var failedAt: Date

    init(_ failure: WebhookFailure) {
        id = failure.id
        firstEventId = failure.firstEventID
        lastEventId = failure.lastEventID
        events = failure.events
        attempts = failure.attempts
        status = failure.status
        error = failure.error
        firstAttemptAt = failure.firstAttemptAt
        failedAt = failure.failedAt
    }
}

struct WebhookFailuresResponse: ResponseEncodable {
    var failures: [WebhookFailure.Response]
}

extension WebhookFailure {
    typealias Response = WebhookFailureResponse
}
