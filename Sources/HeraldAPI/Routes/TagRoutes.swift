import HeraldCore
import HeraldStore
import Hummingbird

/// `/v3/tags`: an app's tags and their devices, in bulk.
struct TagRoutes {
    let store: APIStore
    let auth: Authentication
    let body: JSONBody

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/v3/tags", access: .app(.devicesRead), use: listTags)
        routes.on(.post, "/v3/tags/{tag}", access: .app(.devicesWrite), use: changeMembers)
        routes.on(.delete, "/v3/tags/{tag}", access: .app(.devicesWrite), use: deleteTag)
        routes.on(.get, "/v3/tags/{tag}/registration_ids/{registration_id}", access: .app(.devicesRead), use: membership)
    }

    @Sendable func listTags(_ request: Request, context: HeraldRequestContext) async throws -> TagsResponse {
        let app = try await auth.requireApp(request)
        return TagsResponse(tags: try await store.devices.tags(appID: app.id))
    }

    @Sendable func changeMembers(_ request: Request, context: HeraldRequestContext) async throws -> TagMembersResponse {
        let app = try await auth.requireApp(request)
        let tag = try Validation.label(try context.parameter("tag"), field: "tag")
        let input = try await body.decode(TagMembersRequest.self, from: request)
        let add = try Validation.registrationIDs(input.registrationIDs.add ?? [], field: "registration_ids.add")
        let remove = try Validation.registrationIDs(input.registrationIDs.remove ?? [], field: "registration_ids.remove")
        if let both = add.first(where: remove.contains) {
            throw HeraldError.invalidField("registration_ids", "\(both) is both added and removed")
        }
        let result = try await store.devices.changeTagMembers(appID: app.id, tag: tag, add: add, remove: remove)
        return TagMembersResponse(added: result.added, removed: result.removed)
    }

    @Sendable func deleteTag(_ request: Request, context: HeraldRequestContext) async throws -> HTTPResponse.Status {
        let app = try await auth.requireApp(request)
        let tag = try Validation.label(try context.parameter("tag"), field: "tag")
        try await store.devices.deleteTag(appID: app.id, tag: tag, platforms: try PlatformQuery.platforms(request))
        // 200 with no body, as JPush: its clients read that as success, and a 204 as nothing.
        return .ok
    }

    @Sendable func membership(_ request: Request, context: HeraldRequestContext) async throws -> MembershipResponse {
        let app = try await auth.requireApp(request)
        let tag = try Validation.label(try context.parameter("tag"), field: "tag")
        let registrationID = try context.parameter("registration_id")
        guard let member = try await store.devices.hasTag(appID: app.id, tag: tag, registrationID: registrationID) else {
            throw DeviceRoutes.notFound(registrationID)
        }
        return MembershipResponse(result: member)
    }
}

struct TagMembersRequest: Decodable {
    struct Change: Decodable {
        var add: [String]?
        var remove: [String]?

        enum CodingKeys: String, CodingKey, CaseIterable { case add, remove }

        init(from decoder: any Decoder) throws {
            let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
            add = try container.decodeIfPresent([String].self, forKey: .add)
            remove = try container.decodeIfPresent([String].self, forKey: .remove)
        }
    }

    var registrationIDs: Change

    enum CodingKeys: String, CodingKey, CaseIterable { case registrationIDs = "registration_ids" }

    init(from decoder: any Decoder) throws {
        registrationIDs = try decoder.strictContainer(keyedBy: CodingKeys.self).decode(Change.self, forKey: .registrationIDs)
    }
}

struct TagsResponse: ResponseEncodable { var tags: [String] }
struct TagMembersResponse: ResponseEncodable {
    var added: Int
    var removed: Int
}
struct MembershipResponse: ResponseEncodable { var result: Bool }
