import Foundation
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// `/v3/categories`: notification categories the operator defines on the server, with the
/// app's key and master secret (issue #20).
///
/// A push naming one in `notification.ios.category` carries its configuration, read when
/// the push is accepted (``APIStore/resolvingCategory(_:appID:)``); `deliver` sends it
/// ahead as a silent message; `devices` counts the versions devices report holding.
struct CategoryRoutes {
    let store: APIStore
    let acceptor: PushAcceptor
    let auth: Authentication
    let body: JSONBody

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v3/categories", access: .app(.categories), use: create)
        routes.on(.get, "/v3/categories", access: .app(.categories), use: list)
        routes.on(.get, "/v3/categories/{category_id}", access: .app(.categories), use: show)
        routes.on(.put, "/v3/categories/{category_id}", access: .app(.categories), use: update)
        routes.on(.delete, "/v3/categories/{category_id}", access: .app(.categories), use: delete)
        routes.on(.post, "/v3/categories/{category_id}/deliver", access: .app(.send), use: deliver)
        routes.on(.get, "/v3/categories/{category_id}/devices", access: .app(.categories), use: devices)
    }

    /// The category as stored, version 1. An identifier the app has already is a conflict.
    @Sendable func create(_ request: Request, context: HeraldRequestContext) async throws -> VerbatimKeysResponse<JSONValue> {
        let app = try await auth.requireApp(request)
        let category = try await decode(request, identifier: nil)
        guard let record = try await store.categories.create(appID: app.id, category) else {
            throw HeraldError(
                .conflict,
                "identifier: the app has a category \(category.identifier) already; change it with PUT /v3/categories/\(category.identifier)"
            )
        }
        context.logger.info("category created", metadata: ["herald.category": "\(category.identifier)"])
        return VerbatimKeysResponse(record.json)
    }

    /// `{"categories": [...]}`, by identifier.
    @Sendable func list(_ request: Request, context: HeraldRequestContext) async throws -> VerbatimKeysResponse<JSONValue> {
        let app = try await auth.requireApp(request)
        let records = try await store.categories.list(appID: app.id)
        return VerbatimKeysResponse(.object(["categories": .array(records.map(\.json))]))
    }

    @Sendable func show(_ request: Request, context: HeraldRequestContext) async throws -> VerbatimKeysResponse<JSONValue> {
        let app = try await auth.requireApp(request)
        return VerbatimKeysResponse(try await found(app: app, context: context).json)
    }

    /// Replaces the definition; the version grows by one. Pushes accepted before keep the
    /// version they were accepted with.
    @Sendable func update(_ request: Request, context: HeraldRequestContext) async throws -> VerbatimKeysResponse<JSONValue> {
        let app = try await auth.requireApp(request)
        let identifier = try context.parameter("category_id")
        let category = try await decode(request, identifier: identifier)
        guard let record = try await store.categories.update(appID: app.id, category) else { throw Self.notFound(identifier) }
        return VerbatimKeysResponse(record.json)
    }

    @Sendable func delete(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let app = try await auth.requireApp(request)
        let identifier = try context.parameter("category_id")
        guard try await store.categories.delete(appID: app.id, identifier: identifier) else { throw Self.notFound(identifier) }
        return Response(status: .ok, headers: [.contentLength: "0"])
    }

    /// Sends the configuration ahead to an audience (`{"audience": ..., "platform": ...,
    /// "time_to_live": N}`): a `category_config` message over the connection, an APNs
    /// background push (`content-available: 1`, priority 5) otherwise. Answers
    /// `{"msg_id", "identifier", "version"}`; the message reports like any push.
    @Sendable func deliver(_ request: Request, context: HeraldRequestContext) async throws -> VerbatimKeysResponse<JSONValue> {
        let app = try await auth.requireApp(request)
        let record = try await found(app: app, context: context)
        let input = try await body.decode(CategoryDeliveryBody.self, from: request)
        let pushRequest = PushRequest.categoryDelivery(
            audience: input.audience,
            platform: input.platform,
            config: record.config,
            timeToLive: input.timeToLive
        )
        let push = try pushRequest.validated().controlled(by: app)
        if !push.path.checksAudienceWhenStored, try await store.audienceSize(appID: app.id, audience: push.audience, limit: 1) == 0 {
            throw HeraldError(.noAudienceMatch, "audience: no device of this app matches; nothing was sent")
        }
        let accepted = try await acceptor.accept(pushRequest, push: push, appID: app.id)
        return VerbatimKeysResponse(
            .object([
                "msg_id": .string(accepted.msgID), "identifier": .string(record.category.identifier), "version": .int(record.version),
            ])
        )
    }

    /// `{"identifier", "version", "devices": [{"version", "count"}], "total"}`: how many
    /// devices reported holding each version; `version` is the current one.
    @Sendable func devices(_ request: Request, context: HeraldRequestContext) async throws -> VerbatimKeysResponse<JSONValue> {
        let app = try await auth.requireApp(request)
        let record = try await found(app: app, context: context)
        let counts = try await store.categories.deviceVersions(appID: app.id, identifier: record.category.identifier)
        return VerbatimKeysResponse(
            .object([
                "identifier": .string(record.category.identifier),
                "version": .int(record.version),
                "devices": .array(counts.map { .object(["version": .int($0.version), "count": .int(Int64($0.devices))]) }),
                "total": .int(Int64(counts.reduce(0) { $0 + $1.devices })),
            ])
        )
    }

    private func found(app: AppRecord, context: HeraldRequestContext) async throws -> CategoryRecord {
        let identifier = try context.parameter("category_id")
        guard let record = try await store.categories.find(appID: app.id, identifier: identifier) else { throw Self.notFound(identifier) }
        return record
    }

    /// The body as a category, validated; for an update, its identifier is the path's (a
    /// body may omit it, and may not name another).
    private func decode(_ request: Request, identifier: String?) async throws -> NotificationCategory {
        var category: NotificationCategory
        if let identifier {
            let fields = try await body.decode([String: JSONValue].self, from: request)
            if let given = fields["identifier"], given != .string(identifier) {
                throw HeraldError.invalidField("identifier", "must be omitted or equal the path's category id (\(identifier))")
            }
            var complete = fields
            complete["identifier"] = .string(identifier)
            do {
                category = try JSONDecoder().decode(NotificationCategory.self, from: JSONEncoder().encode(complete))
            } catch let error as DecodingError {
                throw JSONBody.translate(error)
            }
        } else {
            category = try await body.decode(NotificationCategory.self, from: request)
        }
        try category.validate()
        return category
    }

    static func notFound(_ identifier: String) -> HeraldError {
        HeraldError(.categoryNotFound, "category_id: the app has no category \(identifier)")
    }
}

/// The body of `POST /v3/categories/{id}/deliver`.
struct CategoryDeliveryBody: Decodable {
    var audience: PushAudience
    var platform: PushPlatforms?
    var timeToLive: Int?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case audience, platform
        case timeToLive = "time_to_live"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        audience = try container.decode(PushAudience.self, forKey: .audience)
        platform = try container.decodeIfGiven(PushPlatforms.self, forKey: .platform)
        timeToLive = try container.decodeIfGiven(Int.self, forKey: .timeToLive)
    }
}

extension APIStore {
    /// The entries of a batch push, each carrying the configuration of the category it
    /// names (looked up once per category), and validated again with it; an entry that no
    /// longer fits APNs' limit is handed to `failed` and left out.
    func resolvingCategories(
        _ entries: [BatchPushEntry],
        appID: Int64,
        failed: (String, any Error) -> Void
    ) async throws -> [BatchPushEntry] {
        var configs: [String: JSONValue?] = [:]
        var resolved: [BatchPushEntry] = []
        for var entry in entries {
            guard let name = entry.request.namedCategory else {
                resolved.append(entry)
                continue
            }
            if configs[name] == nil { configs[name] = .some(try await categories.find(appID: appID, identifier: name)?.config) }
            guard let config = configs[name] ?? nil else {
                resolved.append(entry)
                continue
            }
            do {
                entry.request = entry.request.carrying(categoryConfig: config)
                let ignored = entry.ignoredFieldWarnings
                entry.push = try entry.request.validated()
                entry.push.warnings = ignored + entry.push.warnings
                resolved.append(entry)
            } catch {
                failed(entry.cid, error)
            }
        }
        return resolved
    }

    /// The push carrying the configuration of the category it names, as it is now, when the
    /// app defines one (read at acceptance, so the stored message keeps it: a later change
    /// of the category doesn't change an accepted push). Only pushes naming a category pay
    /// the lookup.
    func resolvingCategory(_ request: PushRequest, appID: Int64) async throws -> PushRequest {
        try request.checkNoCategoryConfig()
        guard let name = request.namedCategory, let record = try await categories.find(appID: appID, identifier: name) else { return request }
        return request.carrying(categoryConfig: record.config)
    }
}
