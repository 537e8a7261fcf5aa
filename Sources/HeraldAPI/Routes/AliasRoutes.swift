import HeraldCore
import HeraldStore
import Hummingbird

/// `/v3/aliases/{alias}`: which devices carry an alias, taking it from some of them, and
/// clearing it.
struct AliasRoutes {
    let store: APIStore
    let auth: Authentication
    let body: JSONBody

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/v3/aliases/{alias}", access: .app(.devicesRead), use: getAlias)
        routes.on(.post, "/v3/aliases/{alias}", access: .app(.devicesWrite), use: removeDevices)
        routes.on(.delete, "/v3/aliases/{alias}", access: .app(.devicesWrite), use: deleteAlias)
    }

    /// `{"registration_ids": {"remove": [...]}}`: these devices lose the alias. JPush's
    /// shape, which has no `add` (a device's alias is set on the device,
    /// `POST /v3/devices/{registration_id}`, and an alias holds at most 10 devices). Every
    /// id must name a device of the app; one that doesn't have the alias is left as it is.
    @Sendable func removeDevices(_ request: Request, context: HeraldRequestContext) async throws -> AliasRemovedResponse {
        let app = try await auth.requireApp(request)
        let alias = try Validation.label(try context.parameter("alias"), field: "alias")
        let input = try await body.decode(AliasDevicesRequest.self, from: request)
        if input.registrationIDs.remove.isEmpty { throw HeraldError.invalidField("registration_ids.remove", "must not be empty") }
        let ids = try Validation.registrationIDs(input.registrationIDs.remove, field: "registration_ids.remove")
        return AliasRemovedResponse(removed: try await store.devices.removeAlias(appID: app.id, alias: alias, registrationIDs: ids))
    }

    @Sendable func getAlias(_ request: Request, context: HeraldRequestContext) async throws -> RegistrationIDsResponse {
        let app = try await auth.requireApp(request)
        let alias = try Validation.label(try context.parameter("alias"), field: "alias")
        let platforms = try PlatformQuery.platforms(request)
        return RegistrationIDsResponse(registrationIds: try await store.devices.registrationIDs(appID: app.id, alias: alias, platforms: platforms))
    }

    @Sendable func deleteAlias(_ request: Request, context: HeraldRequestContext) async throws -> HTTPResponse.Status {
        let app = try await auth.requireApp(request)
        let alias = try Validation.label(try context.parameter("alias"), field: "alias")
        try await store.devices.deleteAlias(appID: app.id, alias: alias, platforms: try PlatformQuery.platforms(request))
        // 200 with no body, as JPush: its clients read that as success, and a 204 as nothing.
        return .ok
    }
}

struct RegistrationIDsResponse: ResponseEncodable {
    var registrationIds: [String]
}

/// `{"registration_ids": {"remove": [...]}}`; `add` is refused as an unknown field.
struct AliasDevicesRequest: Decodable {
    struct Change: Decodable {
        var remove: [String]

        enum CodingKeys: String, CodingKey, CaseIterable { case remove }

        init(from decoder: any Decoder) throws {
            remove = try decoder.strictContainer(keyedBy: CodingKeys.self).decode([String].self, forKey: .remove)
        }
    }

    var registrationIDs: Change

    enum CodingKeys: String, CodingKey, CaseIterable { case registrationIDs = "registration_ids" }

    init(from decoder: any Decoder) throws {
        registrationIDs = try decoder.strictContainer(keyedBy: CodingKeys.self).decode(Change.self, forKey: .registrationIDs)
    }
}

struct AliasRemovedResponse: ResponseEncodable {
    /// How many of the devices had the alias.
    var removed: Int
}
