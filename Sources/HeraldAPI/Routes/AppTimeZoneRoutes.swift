import Foundation
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// `/admin/v1/apps/{app_key}/time_zone`: the zone an app's schedules read their times in
/// when they name none (UTC until set; JPush reads them in Beijing time).
struct AppTimeZoneRoutes {
    let store: APIStore
    let auth: Authentication
    let body: JSONBody

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/admin/v1/apps/{app_key}/time_zone", access: .admin, use: show)
        routes.on(.put, "/admin/v1/apps/{app_key}/time_zone", access: .admin, use: set)
    }

    @Sendable func show(_ request: Request, context: HeraldRequestContext) async throws -> AppTimeZoneBody {
        try await auth.requireAdmin(request)
        let app = try await app(context)
        guard let zone = try await store.appTimeZone(appID: app.id) else { throw AdminRoutes.appNotFound }
        return AppTimeZoneBody(timeZone: zone)
    }

    /// Sets the zone; the app's schedules without a zone of their own are evaluated afresh
    /// from now in it.
    @Sendable func set(_ request: Request, context: HeraldRequestContext) async throws -> AppTimeZoneBody {
        try await auth.requireAdmin(request)
        let app = try await app(context)
        let input = try await body.decode(AppTimeZoneBody.self, from: request)
        let zone = try Validation.timeZone(input.timeZone, field: "time_zone").identifier
        guard try await store.setAppTimeZone(appID: app.id, zone) else { throw AdminRoutes.appNotFound }
        context.logger.info("app time zone set", metadata: ["herald.app_key": "\(app.appKey)", "herald.time_zone": "\(zone)"])
        return AppTimeZoneBody(timeZone: zone)
    }

    private func app(_ context: HeraldRequestContext) async throws -> AppRecord {
        try await AdminRoutes.app(context, in: store)
    }
}

/// `{"time_zone": "Asia/Shanghai"}`.
struct AppTimeZoneBody: Codable, ResponseEncodable {
    var timeZone: String

    enum CodingKeys: String, CodingKey, CaseIterable {
        case timeZone = "time_zone"
    }

    init(timeZone: String) { self.timeZone = timeZone }

    init(from decoder: any Decoder) throws {
        timeZone = try decoder.strictContainer(keyedBy: CodingKeys.self).decode(String.self, forKey: .timeZone)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(timeZone, forKey: .timeZone)
    }
}
