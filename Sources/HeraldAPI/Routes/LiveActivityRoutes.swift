import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

/// A device's ActivityKit tokens (migration 0023), set by the app (its device secret) or
/// by the operator (the app's key):
///
/// - `PUT|DELETE /v3/devices/{registration_id}/live_activities/push_to_start/{attributes_type}`:
///   the push-to-start token for one attributes type; a `live_activity` start goes to it.
/// - `PUT|DELETE /v3/devices/{registration_id}/live_activities/{live_activity_id}`: the
///   update token of one running activity; an update or end with `audience.live_activity_id`
///   goes to it. The app removes it when the activity ends.
/// - `GET /v3/devices/{registration_id}/live_activities`: every token the device holds.
struct LiveActivityRoutes {
    let store: APIStore
    let auth: Authentication
    let body: JSONBody

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/v3/devices/{registration_id}/live_activities", access: .appOrDevice(.devicesRead), use: list)
        routes.on(
            .put,
            "/v3/devices/{registration_id}/live_activities/push_to_start/{attributes_type}",
            access: .appOrDevice(.devicesWrite),
            use: setPushToStart
        )
        routes.on(
            .delete,
            "/v3/devices/{registration_id}/live_activities/push_to_start/{attributes_type}",
            access: .appOrDevice(.devicesWrite),
            use: deletePushToStart
        )
        routes.on(.put, "/v3/devices/{registration_id}/live_activities/{live_activity_id}", access: .appOrDevice(.devicesWrite), use: setActivity)
        routes.on(
            .delete,
            "/v3/devices/{registration_id}/live_activities/{live_activity_id}",
            access: .appOrDevice(.devicesWrite),
            use: deleteActivity
        )
    }

    @Sendable func list(_ request: Request, context: HeraldRequestContext) async throws -> LiveActivityTokensResponse {
        let registrationID = try context.parameter("registration_id")
        let principal = try await auth.requireAppOrDevice(request, registrationID: registrationID)
        guard let tokens = try await store.devices.liveActivityTokens(appID: principal.appID, registrationID: registrationID) else {
            throw DeviceRoutes.notFound(registrationID)
        }
        return LiveActivityTokensResponse(tokens)
    }

    @Sendable func setPushToStart(_ request: Request, context: HeraldRequestContext) async throws -> HTTPResponse.Status {
        try await set(request, context: context, target: .pushToStart(attributesType: try Self.name(context, "attributes_type")))
    }

    @Sendable func setActivity(_ request: Request, context: HeraldRequestContext) async throws -> HTTPResponse.Status {
        try await set(request, context: context, target: .activity(id: try Self.name(context, "live_activity_id")))
    }

    @Sendable func deletePushToStart(_ request: Request, context: HeraldRequestContext) async throws -> HTTPResponse.Status {
        try await delete(request, context: context, target: .pushToStart(attributesType: try Self.name(context, "attributes_type")))
    }

    @Sendable func deleteActivity(_ request: Request, context: HeraldRequestContext) async throws -> HTTPResponse.Status {
        try await delete(request, context: context, target: .activity(id: try Self.name(context, "live_activity_id")))
    }

    private func set(_ request: Request, context: HeraldRequestContext, target: LiveActivityTarget) async throws -> HTTPResponse.Status {
        let registrationID = try context.parameter("registration_id")
        let principal = try await auth.requireAppOrDevice(request, registrationID: registrationID)
        let input = try await body.decode(LiveActivityTokenRequest.self, from: request)
        let token = try Validation.apnsToken(input.token, field: "token")
        guard try await store.devices.setLiveActivityToken(appID: principal.appID, registrationID: registrationID, target: target, token: token)
        else {
            throw DeviceRoutes.notFound(registrationID)
        }
        return .noContent
    }

    private func delete(_ request: Request, context: HeraldRequestContext, target: LiveActivityTarget) async throws -> HTTPResponse.Status {
        let registrationID = try context.parameter("registration_id")
        let principal = try await auth.requireAppOrDevice(request, registrationID: registrationID)
        switch try await store.devices.deleteLiveActivityToken(appID: principal.appID, registrationID: registrationID, target: target) {
        case nil: throw DeviceRoutes.notFound(registrationID)
        case false?: throw HeraldError.invalidField(target.kind == "start" ? "attributes_type" : "live_activity_id", "the device has no such token")
        case true?: return .noContent
        }
    }

    /// An attributes type or Live Activity id from the path.
    private static func name(_ context: HeraldRequestContext, _ field: String) throws -> String {
        let value = try context.parameter(field)
        if value.isEmpty || value.utf8.count > LiveActivityPush.maxNameBytes {
            throw HeraldError.invalidField(field, "must be 1 to \(LiveActivityPush.maxNameBytes) bytes")
        }
        if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw HeraldError.invalidField(field, "must not contain control characters")
        }
        return value
    }
}

/// `{"token": "<hex>"}`: an ActivityKit push token.
struct LiveActivityTokenRequest: Decodable {
    var token: String

    enum CodingKeys: String, CodingKey, CaseIterable { case token }

    init(from decoder: any Decoder) throws {
        token = try decoder.strictContainer(keyedBy: CodingKeys.self).decode(String.self, forKey: .token)
    }
}

/// `{"push_to_start": {"<attributes type>": "<token>"}, "activities": {"<live_activity_id>": "<token>"}}`.
struct LiveActivityTokensResponse: ResponseEncodable {
    var pushToStart: [String: String] = [:]
    var activities: [String: String] = [:]

    enum CodingKeys: String, CodingKey {
        case pushToStart = "push_to_start"
        case activities
    }

    init(_ tokens: [LiveActivityToken]) {
        for token in tokens {
            switch token.target {
            case .pushToStart(let attributesType): pushToStart[attributesType] = token.token
            case .activity(let id): activities[id] = token.token
            }
        }
    }
}
