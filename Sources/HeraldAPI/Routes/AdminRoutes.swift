import Foundation
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// `/admin/v1`: apps and their APNs credentials, behind the admin token.
struct AdminRoutes {
    let store: APIStore
    let auth: Authentication
    let body: JSONBody
    let apnsDestination: APNsDestination
    /// The node's `api.rateLimit.perMinute`, shown for apps without a limit of their own.
    let defaultRateLimit: Int

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/admin/v1/apps", access: .admin, use: createApp)
        routes.on(.get, "/admin/v1/apps", access: .admin, use: listApps)
        routes.on(.get, "/admin/v1/apps/{app_key}", access: .admin, use: getApp)
        routes.on(.patch, "/admin/v1/apps/{app_key}", access: .admin, use: updateApp)
        routes.on(.delete, "/admin/v1/apps/{app_key}", access: .admin, confirm: true, use: deleteApp)
        routes.on(.put, "/admin/v1/apps/{app_key}/apns", access: .admin, confirm: true, use: setAPNs)
        routes.on(.get, "/admin/v1/apps/{app_key}/apns", access: .admin, use: getAPNs)
        routes.on(.delete, "/admin/v1/apps/{app_key}/apns", access: .admin, confirm: true, use: deleteAPNs)
    }

    @Sendable func createApp(_ request: Request, context: HeraldRequestContext) async throws -> EditedResponse<AppCreatedResponse> {
        try await auth.requireAdmin(request)
        let input = try await body.decode(CreateAppRequest.self, from: request)
        let name = try Validation.appName(input.name)
        let credentials = try input.credentials()
        let created = try await store.createApp(name: name, credentials: credentials)
        context.logger.info(
            "app created",
            metadata: ["herald.app_key": "\(created.app.appKey)", "herald.credentials": "\(credentials == nil ? "issued" : "given")"]
        )
        return EditedResponse(status: .created, response: AppCreatedResponse(created))
    }

    @Sendable func listApps(_ request: Request, context: HeraldRequestContext) async throws -> AppsResponse {
        try await auth.requireAdmin(request)
        return AppsResponse(
            apps: try await store.listApps().map { AppResponse($0, destination: apnsDestination, defaultRateLimit: defaultRateLimit) }
        )
    }

    @Sendable func getApp(_ request: Request, context: HeraldRequestContext) async throws -> AppResponse {
        try await auth.requireAdmin(request)
        return AppResponse(try await app(context), destination: apnsDestination, defaultRateLimit: defaultRateLimit)
    }

    /// Changes the settings the body names. Nodes see a new rate limit, quiet hours or cap
    /// within the few seconds they keep verified credentials (``AppCredentialCache``); the
    /// message center reads the controls from the app at each fan-out.
    @Sendable func updateApp(_ request: Request, context: HeraldRequestContext) async throws -> AppResponse {
        try await auth.requireAdmin(request)
        let appKey = try await app(context).appKey
        let change = try await body.decode(UpdateAppRequest.self, from: request).change
        let updated = change == AppSettingsChange() ? try await store.app(appKey: appKey) : try await store.updateApp(appKey: appKey, change)
        context.logger.info("app settings changed", metadata: ["herald.app_key": "\(appKey)", "herald.change": "\(change)"])
        guard let updated else { throw Self.appNotFound }
        return AppResponse(updated, destination: apnsDestination, defaultRateLimit: defaultRateLimit)
    }

    @Sendable func deleteApp(_ request: Request, context: HeraldRequestContext) async throws -> HTTPResponse.Status {
        try await auth.requireAdmin(request)
        let appKey = try await Self.app(context, in: store).appKey
        guard try await store.deleteApp(appKey: appKey) else { throw Self.appNotFound }
        context.logger.info("app deleted", metadata: ["herald.app_key": "\(appKey)"])
        return .noContent
    }

    @Sendable func setAPNs(_ request: Request, context: HeraldRequestContext) async throws -> APNsStatusResponse {
        try await auth.requireAdmin(request)
        let appKey = try await app(context).appKey
        let credentials = try await body.decode(SetAPNsCredentialsRequest.self, from: request).validated()
        guard let app = try await store.apns.setAPNsCredentials(credentials, appKey: appKey),
            let status = APNsStatusResponse(app, destination: apnsDestination)
        else {
            throw Self.appNotFound
        }
        context.logger.info("APNs credentials set", metadata: ["herald.app_key": "\(appKey)", "herald.apns.type": "\(status.type)"])
        return status
    }

    @Sendable func getAPNs(_ request: Request, context: HeraldRequestContext) async throws -> APNsStatusResponse {
        try await auth.requireAdmin(request)
        guard let status = APNsStatusResponse(try await app(context), destination: apnsDestination) else { throw Self.noCredentials }
        return status
    }

    @Sendable func deleteAPNs(_ request: Request, context: HeraldRequestContext) async throws -> HTTPResponse.Status {
        try await auth.requireAdmin(request)
        let appKey = try await app(context).appKey
        guard try await store.apns.deleteAPNsCredentials(appKey: appKey) else { throw Self.noCredentials }
        return .noContent
    }

    private func app(_ context: HeraldRequestContext) async throws -> AppRecord {
        try await Self.app(context, in: store)
    }

    /// The app the path's `{app_key}` names, or `appNotFound`; the request's audit entry
    /// is the app's.
    static func app(_ context: HeraldRequestContext, in store: APIStore) async throws -> AppRecord {
        guard let app = try await store.app(appKey: try context.parameter("app_key")) else { throw appNotFound }
        RouteAccess.serving?.audit?.concerning(appID: app.id)
        return app
    }

    static let appNotFound = HeraldError(.appNotFound, "app_key: no app with this key")
    static let noCredentials = HeraldError(.apnsCredentialsNotFound, "the app has no APNs credentials")
}
