import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1

/// `/admin/v1/apps/{app_key}/webhooks`: an app's webhook endpoints, behind the admin token.
/// Under the admin API, not the app's own credentials: a webhook makes Herald send requests
/// to any address it names, from inside the network Herald runs in, which is the
/// administrator's call, as the APNs credentials are.
struct WebhookRoutes {
    let store: APIStore
    let events: EventStore
    let auth: Authentication
    let body: JSONBody
    /// The addresses a webhook may name (a literal one is checked here).
    let rule: OutboundAddressRule
    /// Sends a webhook's test request (the center's client); nil: no test requests.
    let outbound: (any OutboundPosting)?

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/admin/v1/apps/{app_key}/webhooks", access: .admin, use: create)
        routes.on(.get, "/admin/v1/apps/{app_key}/webhooks", access: .admin, use: list)
        routes.on(.get, "/admin/v1/apps/{app_key}/webhooks/{webhook_id}", access: .admin, use: get)
        routes.on(.delete, "/admin/v1/apps/{app_key}/webhooks/{webhook_id}", access: .admin, use: delete)
        routes.on(.post, "/admin/v1/apps/{app_key}/webhooks/{webhook_id}/test", access: .admin, use: test)
        routes.on(.get, "/admin/v1/apps/{app_key}/webhooks/{webhook_id}/failures", access: .admin, use: failures)
    }

    @Sendable func create(_ request: Request, context: HeraldRequestContext) async throws -> EditedResponse<WebhookCreatedResponse> {
        try await auth.requireAdmin(request)
        let appKey = try context.parameter("app_key")
        let input = try await body.decode(CreateWebhookRequest.self, from: request)
        guard PushCallback.isHTTPURL(input.url), input.url.utf8.count <= 2048 else {
            throw HeraldError.invalidField("url", "must be an http or https URL with a host, at most 2048 bytes")
        }
        var types: [DeliveryEventType] = []
        for (index, name) in (input.types ?? []).enumerated() {
            guard let type = DeliveryEventType(rawValue: name) else {
                throw HeraldError.invalidField("types[\(index)]", "one of: " + DeliveryEventType.allCases.map(\.rawValue).joined(separator: ", "))
            }
            if !types.contains(type) { types.append(type) }
        }
        try rule.check(url: input.url, field: "url")
        switch try await events.createWebhook(appKey: appKey, url: input.url, types: types) {
        case .noApp:
            throw AdminRoutes.appNotFound
        case .limitReached:
            throw HeraldError(.limitExceeded, "an app has at most \(EventStore.webhooksPerApp) webhooks; remove one first")
        case .created(let webhook, let secret):
            context.logger.info("webhook added", metadata: ["herald.app_key": "\(appKey)", "herald.webhook_id": "\(webhook.id)"])
            return EditedResponse(status: .created, response: WebhookCreatedResponse(webhook: WebhookResponse(webhook), secret: secret))
        }
    }

    @Sendable func list(_ request: Request, context: HeraldRequestContext) async throws -> WebhooksResponse {
        try await auth.requireAdmin(request)
        let appKey = try context.parameter("app_key")
        guard try await store.app(appKey: appKey) != nil else { throw AdminRoutes.appNotFound }
        return WebhooksResponse(webhooks: try await events.webhooks(appKey: appKey).map(WebhookResponse.init))
    }

    @Sendable func get(_ request: Request, context: HeraldRequestContext) async throws -> WebhookResponse {
        try await auth.requireAdmin(request)
        let (appKey, id) = try await ids(context)
        guard let webhook = try await events.webhook(appKey: appKey, id: id) else { throw Self.notFound }
        return WebhookResponse(webhook)
    }

    @Sendable func delete(_ request: Request, context: HeraldRequestContext) async throws -> HTTPResponse.Status {
        try await auth.requireAdmin(request)
        let (appKey, id) = try await ids(context)
        guard try await events.deleteWebhook(appKey: appKey, id: id) else { throw Self.notFound }
        context.logger.info("webhook removed", metadata: ["herald.app_key": "\(appKey)", "herald.webhook_id": "\(id)"])
        return .noContent
    }

    /// Sends the endpoint one signed request now, with an event of no message
    /// (`{"events": [{"type": "test", ...}]}`), and answers what the endpoint answered.
    /// Nothing is recorded: the endpoint's cursor and state don't change.
    @Sendable func test(_ request: Request, context: HeraldRequestContext) async throws -> WebhookTestResponse {
        try await auth.requireAdmin(request)
        let (appKey, id) = try await ids(context)
        guard let endpoint = try await events.webhookSecret(appKey: appKey, id: id) else { throw Self.notFound }
        let at = Date()
        let body = Array(
            #"{"events":[{"id":0,"type":"test","webhook_id":\#(id),"at":"\#(DeliveryEvent.timestamp(at))","data":{}}]}"#.utf8
        )
        let timestamp = Int64(at.timeIntervalSince1970)
        guard let outbound else { throw HeraldError(.unavailable, "this node sends no webhook requests") }
        let headers: [(name: String, value: String)] = [
            ("Content-Type", "application/json"),
            (WebhookSignature.timestampHeader, String(timestamp)),
            (WebhookSignature.signatureHeader, WebhookSignature.header(secret: endpoint.secret, timestamp: timestamp, body: body)),
        ]
        let started = ContinuousClock.now
        // As the dispatcher sends: the address checked, a redirect not followed (a failure).
        let answer = await outbound.post(endpoint.url, headers: headers, body: body, timeout: .seconds(10))
        return WebhookTestResponse(
            delivered: answer.isAccepted,
            status: answer.status,
            error: answer.failure,
            milliseconds: Self.milliseconds(since: started)
        )
    }

    @Sendable func failures(_ request: Request, context: HeraldRequestContext) async throws -> WebhookFailuresResponse {
        try await auth.requireAdmin(request)
        let (appKey, id) = try await ids(context)
        guard let failures = try await events.webhookFailures(appKey: appKey, webhookID: id) else { throw Self.notFound }
        return WebhookFailuresResponse(failures: failures.map(WebhookFailureResponse.init))
    }

    /// The app key (of an existing app) and the webhook id of the path.
    private func ids(_ context: HeraldRequestContext) async throws -> (String, Int64) {
        let appKey = try context.parameter("app_key")
        guard try await store.app(appKey: appKey) != nil else { throw AdminRoutes.appNotFound }
        guard let id = Int64(try context.parameter("webhook_id")), id > 0 else { throw Self.notFound }
        return (appKey, id)
    }

    private static func milliseconds(since start: ContinuousClock.Instant) -> Int {
        let elapsed = ContinuousClock.now - start
        return Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
    }

    static let notFound = HeraldError(.webhookNotFound, "webhook_id: no webhook with this id in this app")
}
