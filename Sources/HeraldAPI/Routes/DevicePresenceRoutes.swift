import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

/// `POST /v3/devices/status`: which devices are connected, in JPush's shape.
///
/// `online` is true while the device holds a connection to a live node (JPush: online in
/// the last 10 minutes); `last_online_time` is when its last connection closed, left out
/// while it is online and for a device that never connected. A registration id that names
/// no device of this app, or is no registration id at all, answers `null`, as in JPush.
struct DevicePresenceRoutes {
    let store: APIStore
    let auth: Authentication
    let body: JSONBody

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v3/devices/status", access: .app(.devicesRead), use: status)
    }

    @Sendable func status(
        _ request: Request,
        context: HeraldRequestContext
    ) async throws -> VerbatimKeysResponse<[String: DeviceStatusEntry?]> {
        let app = try await auth.requireApp(request)
        let input = try await body.decode(RegistrationIDsRequest.self, from: request)
        let ids = input.registrationIDs
        if ids.isEmpty { throw HeraldError.invalidField("registration_ids", "must not be empty") }
        if ids.count > Limits.maxIDsPerBulkCall {
            throw HeraldError.limit("registration_ids", "at most \(Limits.maxIDsPerBulkCall) per request (got \(ids.count))")
        }
        let presence = try await store.devices.presence(appID: app.id, registrationIDs: ids)
        var answer: [String: DeviceStatusEntry?] = [:]
        // updateValue: assigning nil through the subscript would drop the key, not write null.
        for id in ids { answer.updateValue(presence[id].map(DeviceStatusEntry.init), forKey: id) }
        return VerbatimKeysResponse(answer)
    }
}

/// `{"registration_ids": [...]}`.
struct RegistrationIDsRequest: Decodable {
    var registrationIDs: [String]

    enum CodingKeys: String, CodingKey, CaseIterable { case registrationIDs = "registration_ids" }

    init(from decoder: any Decoder) throws {
        registrationIDs = try decoder.strictContainer(keyedBy: CodingKeys.self).decode([String].self, forKey: .registrationIDs)
    }
}

/// `{"online": false, "last_online_time": "2024-05-01 09:30:00"}`.
struct DeviceStatusEntry: Encodable {
    var online: Bool
    /// JPush's format, in UTC.
    var lastOnlineTime: String?

    enum CodingKeys: String, CodingKey {
        case online
        case lastOnlineTime = "last_online_time"
    }

    init(_ presence: DevicePresence) {
        online = presence.online
        lastOnlineTime = presence.lastOnlineAt.map(JPushTime.format)
    }
}

/// Times as JPush writes them: `yyyy-MM-dd HH:mm:ss`, no zone. Herald writes UTC.
enum JPushTime {
    static func format(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02d",
            parts.year ?? 0,
            parts.month ?? 0,
            parts.day ?? 0,
            parts.hour ?? 0,
            parts.minute ?? 0,
            parts.second ?? 0
        )
    }
}
