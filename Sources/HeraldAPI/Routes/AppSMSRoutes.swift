import Foundation
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// `/admin/v1/apps/{app_key}/sms`: the app's own SMS provider over HTTP, for the SMS
/// fallback of its pushes (`sms_message`). Sealed at rest; the secret is never shown.
/// Without one, the node's default provider sends the app's SMS.
struct AppSMSRoutes {
    let store: APIStore
    let auth: Authentication
    let body: JSONBody
    let outbound: OutboundAddressRule

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/admin/v1/apps/{app_key}/sms", access: .admin, use: show)
        routes.on(.put, "/admin/v1/apps/{app_key}/sms", access: .admin, confirm: true, use: set)
        routes.on(.delete, "/admin/v1/apps/{app_key}/sms", access: .admin, confirm: true, use: delete)
    }

    @Sendable func show(_ request: Request, context: HeraldRequestContext) async throws -> SMSProviderSummary {
        try await auth.requireAdmin(request)
        let appKey = try await appKey(context)
        guard let (provider, updatedAt) = try await store.smsProviders.find(appKey: appKey) else { throw Self.noProvider }
        return SMSProviderSummary(provider, updatedAt: updatedAt)
    }

    @Sendable func set(_ request: Request, context: HeraldRequestContext) async throws -> SMSProviderSummary {
        try await auth.requireAdmin(request)
        let appKey = try await appKey(context)
        let provider = try await body.decode(SMSHTTPProviderConfiguration.self, from: request).validated()
        try outbound.check(url: provider.url, field: "url")
        guard try await store.smsProviders.set(provider, appKey: appKey) else { throw AdminRoutes.appNotFound }
        // Without its query, which often carries the provider's key (`?apikey=`).
        context.logger.info("SMS provider set", metadata: ["herald.app_key": "\(appKey)", "herald.sms.url": "\(provider.redactedURL)"])
        return SMSProviderSummary(provider, updatedAt: Date())
    }

    @Sendable func delete(_ request: Request, context: HeraldRequestContext) async throws -> HTTPResponse.Status {
        try await auth.requireAdmin(request)
        guard try await store.smsProviders.delete(appKey: try await appKey(context)) else { throw Self.noProvider }
        return .noContent
    }

    private func appKey(_ context: HeraldRequestContext) async throws -> String {
        try await AdminRoutes.app(context, in: store).appKey
    }

    static let noProvider = HeraldError(.smsProviderNotFound, "the app has no SMS provider of its own")
}

/// The provider as shown: everything but the secret.
struct SMSProviderSummary: ResponseEncodable {
    var type = "http"
    var url: String
    var bodyTemplate: String
    var signatureHeader: String
    var timeoutSeconds: Int
    var updatedAt: Date

    init(_ provider: SMSHTTPProviderConfiguration, updatedAt: Date) {
        url = provider.url
        bodyTemplate = provider.bodyTemplate
        signatureHeader = provider.signatureHeader
        timeoutSeconds = provider.timeoutSeconds
        self.updatedAt = updatedAt
    }
}
