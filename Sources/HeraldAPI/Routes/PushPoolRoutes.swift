import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

/// `GET /v3/push/cid` and `GET /v3/push/quota`: what a JPush client asks for before it
/// pushes.
///
/// Cids are not remembered. JPush issues them as `{app_key}-{uuid}` and checks a pushed cid
/// loosely; Herald accepts any cid of 1 to 64 bytes on a push and de-duplicates by the cid
/// actually pushed, per app, for 24 hours. Issuing is only a convenience: a random UUID
/// makes a cid no other push of the app has, and storing what was issued would add a
/// write per request for no check a push could rely on.
struct PushPoolRoutes {
    let auth: Authentication

    /// The most cids one request gets (JPush's limit).
    static let maxCIDs = 1000

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/v3/push/cid", access: .app(.send), use: cids)
        routes.on(.get, "/v3/push/quota", access: .app(.send), use: quota)
    }

    @Sendable func cids(_ request: Request, context: HeraldRequestContext) async throws -> CIDListResponse {
        let app = try await auth.requireApp(request)
        let query = request.uri.queryParameters
        var count = 1
        if let text = query["count"].map(String.init) {
            guard let value = Int(text), value >= 1 else {
                throw HeraldError.invalidField("count", "must be a whole number from 1 to \(Self.maxCIDs)")
            }
            if value > Self.maxCIDs { throw HeraldError.limit("count", "at most \(Self.maxCIDs) cids per request (got \(value))") }
            count = value
        }
        if let type = query["type"].map(String.init), !["push", "schedule"].contains(type) {
            throw HeraldError.invalidField("type", "must be push or schedule")
        }
        return CIDListResponse(cidlist: (0..<count).map { _ in "\(app.appKey)-\(UUID().uuidString.lowercased())" })
    }

    /// Herald meters nothing: no daily quota, no vendor channel with one. The answer has
    /// the shape JPush's vendor quota query has, each quota -1 (JPush's "unlimited").
    @Sendable func quota(_ request: Request, context: HeraldRequestContext) async throws -> QuotaResponse {
        _ = try await auth.requireApp(request)
        return QuotaResponse()
    }
}

struct CIDListResponse: ResponseEncodable {
    var cidlist: [String]
}

/// `{"code": 0, "message": "...", "data": {"xiaomi_quota": {...}, ...}}`, as JPush answers.
struct QuotaResponse: ResponseEncodable {
    struct Usage: Encodable {
        var total = -1
        var used = -1
    }

    struct VendorQuota: Encodable {
        var system = Usage()
        var operation = Usage()
    }

    struct Quotas: Encodable {
        var xiaomiQuota = VendorQuota()
        var oppoQuota = VendorQuota()
        var vivoQuota = VendorQuota()
    }

    var code = 0
    var message = "Herald meters no quota: -1 is unlimited. It sends through no vendor channel; pushes are bound only by the per-request limits."
    var data = Quotas()
}
