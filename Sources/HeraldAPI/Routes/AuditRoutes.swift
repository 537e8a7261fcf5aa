import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import Logging
import ServiceLifecycle

/// The audit log (issue #30): `GET /v3/audit` an app's own entries (scope `audit:read`),
/// `GET /admin/v1/audit` everything, `GET /admin/v1/audit/verify` the chain checked from
/// its first entry. Filters: `actor`, `action` (`POST /v3/push`), `since` / `until`
/// (RFC 3339), `after` (an entry id: the next page), `limit` (1 to 1,000, 100). With
/// `Accept: text/event-stream` the entries are streamed as they are written, as the event
/// log is (`Last-Event-ID` resumes).
struct AuditRoutes {
    let store: APIStore
    let auth: Authentication

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/v3/audit", access: .app(.auditRead), use: appEntries)
        routes.on(.get, "/admin/v1/audit", access: .admin, use: allEntries)
        routes.on(.get, "/admin/v1/audit/verify", access: .admin, use: verify)
    }

    @Sendable func appEntries(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let app = try await auth.requireApp(request)
        return try await answer(request, context, appID: app.id)
    }

    @Sendable func allEntries(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        try await auth.requireAdmin(request)
        var appID: Int64?
        if let appKey = request.uri.queryParameters.get("app_key") {
            guard let app = try await store.app(appKey: appKey) else { throw AdminRoutes.appNotFound }
            appID = app.id
        }
        return try await answer(request, context, appID: appID)
    }

    /// A page, or with `Accept: text/event-stream` the stream.
    private func answer(_ request: Request, _ context: HeraldRequestContext, appID: Int64?) async throws -> Response {
        var query = try AuditQuery(request)
        guard request.headers[.accept]?.contains("text/event-stream") == true else {
            return try await page(query, appID: appID).response(from: request, context: context)
        }
        if let last = request.headers[HTTPField.Name("Last-Event-ID")!].flatMap({ Int64($0) }), last >= 0 { query.after = last }
        return stream(query, appID: appID)
    }

    /// One `event: audit` per entry, `id:` its id; open ``EventRoutes/streamLifetime`` at
    /// most, a comment every ``EventRoutes/keepAlive`` while nothing is written.
    private func stream(_ query: AuditQuery, appID: Int64?) -> Response {
        let store = store
        let body = ResponseBody { writer in
            var query = query
            let encoder = JSONEncoder()
            encoder.keyEncodingStrategy = .convertToSnakeCase
            encoder.dateEncodingStrategy = .iso8601
            let end = ContinuousClock.now + EventRoutes.streamLifetime
            var lastWrite = ContinuousClock.now
            try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
            while ContinuousClock.now < end, !Task.isCancelled, !Task.isShuttingDownGracefully {
                let entries = try await query.entries(in: store, appID: appID)
                var out = ByteBuffer()
                for stored in entries {
                    out.writeString("id: \(stored.id)\nevent: audit\ndata: ")
                    out.writeBytes(try encoder.encode(AuditPage.Entry(stored)))
                    out.writeString("\n\n")
                    query.after = stored.id
                }
                if out.readableBytes == 0, ContinuousClock.now - lastWrite >= EventRoutes.keepAlive { out.writeString(": keep-alive\n\n") }
                if out.readableBytes > 0 {
                    try await writer.write(out)
                    lastWrite = ContinuousClock.now
                }
                if entries.count < query.limit { try await Task.sleep(for: .seconds(1)) }
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
    }

    @Sendable func verify(_ request: Request, context: HeraldRequestContext) async throws -> AuditVerification {
        try await auth.requireAdmin(request)
        let (checked, broken) = try await store.audit.verify()
        if let broken { context.logger.critical("the audit log's chain is broken", metadata: ["herald.audit_id": "\(broken)"]) }
        return AuditVerification(intact: broken == nil, checked: checked, firstBrokenId: broken)
    }

    private func page(_ query: AuditQuery, appID: Int64?) async throws -> AuditPage {
        let entries = try await query.entries(in: store, appID: appID)
        return AuditPage(entries: entries.map(AuditPage.Entry.init), next: entries.count == query.limit ? entries.last?.id : nil)
    }
}

/// The filters of a read of the audit log.
struct AuditQuery: Sendable {
    var actor: String?
    var action: String?
    var since: Date?
    var until: Date?
    var after: Int64 = 0
    var limit = 100

    init(_ request: Request) throws {
        let query = request.uri.queryParameters
        func time(_ name: String) throws(HeraldError) -> Date? {
            guard let text = query.get(name) else { return nil }
            guard let date = ReceiptsRequest.rfc3339(text) else { throw .invalidField(name, "must be an ISO 8601 time with a zone") }
            return date
        }
        if let text = query.get("after") {
            guard let value = Int64(text), value >= 0 else { throw HeraldError.invalidField("after", "must be an entry id") }
            after = value
        }
        if let text = query.get("limit") {
            guard let value = Int(text), (1...1_000).contains(value) else { throw HeraldError.invalidField("limit", "must be 1 to 1000") }
            limit = value
        }
        actor = query.get("actor")
        action = query.get("action")
        since = try time("since")
        until = try time("until")
    }

    func entries(in store: APIStore, appID: Int64?) async throws -> [StoredAuditEntry] {
        try await store.audit.entries(
            appID: appID,
            actor: actor,
            action: action,
            since: since,
            until: until,
            afterID: after,
            limit: limit
        )
    }
}

struct AuditPage: ResponseEncodable {
    struct Entry: Encodable {
        var id: Int64
        var at: Date
        var appKey: String?
        var actor: String
        var action: String
        var target: String
        var status: Int
        var address: String?
        var requestId: String?
        var bodyDigest: String?
        var hash: String

        init(_ stored: StoredAuditEntry) {
            id = stored.id
            at = stored.entry.at
            appKey = stored.appKey
            actor = stored.entry.actor
            action = stored.entry.action
            target = stored.entry.target
            status = stored.entry.status
            address = stored.entry.address
            requestId = stored.entry.requestID
            bodyDigest = stored.entry.bodyDigest
            hash = Hex.encode(stored.hash)
        }

        enum CodingKeys: String, CodingKey {
            case id, at, appKey, actor, action, target, status, address, requestId, bodyDigest, hash
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(at, forKey: .at)
            try container.encode(appKey, forKey: .appKey)
            try container.encode(actor, forKey: .actor)
            try container.encode(action, forKey: .action)
            try container.encode(target, forKey: .target)
            try container.encode(status, forKey: .status)
            try container.encode(address, forKey: .address)
            try container.encode(requestId, forKey: .requestId)
            try container.encode(bodyDigest, forKey: .bodyDigest)
            try container.encode(hash, forKey: .hash)
        }
    }

    var entries: [Entry]
    /// The `after` of the next page; null on the last.
    var next: Int64?

    enum CodingKeys: String, CodingKey { case entries, next }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(entries, forKey: .entries)
        try container.encode(next, forKey: .next)
    }
}

struct AuditVerification: ResponseEncodable {
    var intact: Bool
    var checked: Int
    /// The first entry whose hash is not its chain's: altered, or the first after one
    /// removed.
    var firstBrokenId: Int64?

    enum CodingKeys: String, CodingKey { case intact, checked, firstBrokenId }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(intact, forKey: .intact)
        try container.encode(checked, forKey: .checked)
        try container.encode(firstBrokenId, forKey: .firstBrokenId)
    }
}
