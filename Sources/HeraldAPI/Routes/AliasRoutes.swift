import HeraldCore
import HeraldStore
import Hummingbird

/// `/v3/aliases/{alias}`: which devices carry an alias, and clearing it.
struct AliasRoutes {
    let store: APIStore
    let auth: Authentication

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/v3/aliases/{alias}", use: getAlias)
        routes.on(.delete, "/v3/aliases/{alias}", use: deleteAlias)
    }

    @Sendable func getAlias(_ request: Request, context: HeraldRequestContext) async throws -> RegistrationIDsResponse {
        let app = try await auth.requireApp(request)
        let alias = try Validation.label(try context.parameter("alias"), field: "alias")
        return RegistrationIDsResponse(registrationIds: try await store.devices(appID: app.id, alias: alias))
    }

    @Sendable func deleteAlias(_ request: Request, context: HeraldRequestContext) async throws -> HTTPResponse.Status {
        let app = try await auth.requireApp(request)
        let alias = try Validation.label(try context.parameter("alias"), field: "alias")
        try await store.deleteAlias(appID: app.id, alias: alias)
        return .noContent
    }
}

struct RegistrationIDsResponse: ResponseEncodable {
    var registrationIds: [String]
}
