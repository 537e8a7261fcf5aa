import Foundation
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// `/v3/schedules`: JPush's Schedule API, with the app's key and master secret.
///
/// A schedule's own sections (name, enabled, trigger, Herald's time_zone and local_time)
/// answer JPush's Schedule API codes (8100 invalid, 8104 not found); its push is decoded
/// and validated exactly as `POST /v3/push` decodes and validates a push, and refused with
/// the same codes. Whether its audience matches a device is checked when it fires.
struct ScheduleRoutes {
    let store: APIStore
    let auth: Authentication
    let body: JSONBody
    let outbound: OutboundAddressRule

    /// Schedules per page of the list (JPush's).
    static let pageSize = 50
    /// The highest page a list may ask for (50 million schedules in).
    static let maxPage = 1_000_000

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v3/schedules", access: .app(.schedules), use: create)
        routes.on(.get, "/v3/schedules", access: .app(.schedules), use: list)
        routes.on(.get, "/v3/schedules/{schedule_id}", access: .app(.schedules), use: show)
        routes.on(.put, "/v3/schedules/{schedule_id}", access: .app(.schedules), use: update)
        routes.on(.delete, "/v3/schedules/{schedule_id}", access: .app(.schedules), use: delete)
        routes.on(.get, "/v3/schedules/{schedule_id}/msg_ids", access: .app(.schedules), use: msgIDs)
    }

    /// `{"schedule_id", "name"}`, as JPush answers; a cid given before answers the schedule
    /// made then.
    @Sendable func create(_ request: Request, context: HeraldRequestContext) async throws -> VerbatimKeysResponse<JSONValue> {
        let app = try await auth.requireApp(request)
        let (fields, push, warnings) = try await decode(request)
        let definition = try fields.created(push: push)
        let (schedule, repeated) = try await store.schedules.create(appID: app.id, definition, cid: fields.cid)
        if !repeated {
            context.logger.info("schedule created", metadata: ["herald.schedule_id": "\(schedule.scheduleID)"])
        }
        var answer: [String: JSONValue] = ["schedule_id": .string(schedule.scheduleID), "name": .string(schedule.definition.name)]
        if !warnings.isEmpty { answer["warnings"] = .array(warnings.map(JSONValue.string)) }
        return VerbatimKeysResponse(.object(answer))
    }

    /// `{"total_count", "total_pages", "page", "schedules"}`: the active schedules (not
    /// finished), oldest first, 50 a page; a page past the last is empty.
    @Sendable func list(_ request: Request, context: HeraldRequestContext) async throws -> VerbatimKeysResponse<JSONValue> {
        let app = try await auth.requireApp(request)
        var page = 1
        // `?page=` with no value is the first page, as JPush answers it.
        if let text = request.uri.queryParameters["page"].map(String.init), !text.isEmpty {
            guard let value = Int(text), (1...Self.maxPage).contains(value) else {
                throw HeraldError(.invalidSchedule, "page: a whole number from 1 to \(Self.maxPage)")
            }
            page = value
        }
        let found = try await store.schedules.list(appID: app.id, page: page, pageSize: Self.pageSize)
        let pages = (found.total + Self.pageSize - 1) / Self.pageSize
        return VerbatimKeysResponse(
            .object([
                "total_count": .int(Int64(found.total)),
                "total_pages": .int(Int64(pages)),
                "page": .int(Int64(page)),
                "schedules": .array(found.schedules.map(\.json)),
            ])
        )
    }

    @Sendable func show(_ request: Request, context: HeraldRequestContext) async throws -> VerbatimKeysResponse<JSONValue> {
        let app = try await auth.requireApp(request)
        let scheduleID = try context.parameter("schedule_id")
        guard let schedule = try await store.schedules.find(appID: app.id, scheduleID: scheduleID), !schedule.finished else {
            throw Self.notFound(scheduleID)
        }
        return VerbatimKeysResponse(schedule.json)
    }

    /// Replaces the sections given (JPush: each whole) and answers the schedule.
    @Sendable func update(_ request: Request, context: HeraldRequestContext) async throws -> VerbatimKeysResponse<JSONValue> {
        let app = try await auth.requireApp(request)
        let scheduleID = try context.parameter("schedule_id")
        let (fields, push, warnings) = try await decode(request)
        let schedule = try await store.schedules.update(appID: app.id, scheduleID: scheduleID) { existing in
            try fields.updating(existing, push: push)
        }
        guard !warnings.isEmpty, case .object(var answer) = schedule.json else { return VerbatimKeysResponse(schedule.json) }
        answer["warnings"] = .array(warnings.map(JSONValue.string))
        return VerbatimKeysResponse(.object(answer))
    }

    /// 200 with no body, as JPush answers (its clients read that as success).
    @Sendable func delete(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let app = try await auth.requireApp(request)
        let scheduleID = try context.parameter("schedule_id")
        guard try await store.schedules.delete(appID: app.id, scheduleID: scheduleID) else { throw Self.notFound(scheduleID) }
        return Response(status: .ok, headers: [.contentLength: "0"])
    }

    /// JPush's `{"count", "msgids"}` (each msgid the JSON string JPush answers since
    /// 2018: `{"msg_id", "error": {"code", "message"}, "needRetry"}`) for the occurrences
    /// that sent or failed, and Herald's `runs`: every occurrence, missed ones included,
    /// with when it was due and handled. A finished schedule answers too.
    @Sendable func msgIDs(_ request: Request, context: HeraldRequestContext) async throws -> VerbatimKeysResponse<JSONValue> {
        let app = try await auth.requireApp(request)
        let scheduleID = try context.parameter("schedule_id")
        guard let runs = try await store.schedules.runs(appID: app.id, scheduleID: scheduleID) else { throw Self.notFound(scheduleID) }
        let msgids = runs.filter { $0.state != .missed }.map(\.jpushMsgID)
        return VerbatimKeysResponse(
            .object(["count": .int(Int64(msgids.count)), "msgids": .array(msgids.map(JSONValue.string)), "runs": .array(runs.map(\.json))])
        )
    }

    /// The schedule's own sections, checked, and its push, decoded as a push's body is
    /// (its errors name `push.` fields) and validated, with the warnings for what Herald
    /// ignores or doesn't apply.
    private func decode(_ request: Request) async throws -> (ScheduleFields, PushRequest?, [String]) {
        let bytes = try await body.bytes(of: request)
        return try decode(Data(bytes.readableBytesView))
    }

    /// A schedule's body (the console's editor sends the same).
    func decode(_ data: Data) throws -> (ScheduleFields, PushRequest?, [String]) {
        try StoredText.checkNoNUL(data)
        let object: [String: JSONValue]
        do {
            object = try JSONDecoder().decode([String: JSONValue].self, from: data)
        } catch let error as DecodingError {
            throw JSONBody.translate(error)
        }
        let unknownFields = UnknownFields()
        let fields = try ScheduleFields(object, unknownFields: unknownFields)
        guard object["push"] != nil else { return (fields, nil, unknownFields.warnings) }
        let push: PushRequest
        do {
            push = try unknownFields.jsonDecoder.decode(SchedulePushBody.self, from: data).push
        } catch let error as DecodingError {
            throw JSONBody.translate(error)
        }
        let validated: Push
        do {
            try push.checkNoCategoryConfig()
            validated = try push.validated()
            if let callback = validated.callback { try outbound.check(url: callback.url, field: "callback.url") }
        } catch {
            throw HeraldError(error.code, "push.\(error.message)")
        }
        if validated.overrideMsgID != nil {
            throw HeraldError.invalidField("push.options.override_msg_id", "a schedule's push can't override a message; use options.replace")
        }
        return (fields, push, unknownFields.warnings + validated.warnings.map { "push.\($0)" })
    }

    static func notFound(_ scheduleID: String) -> HeraldError {
        HeraldError(.scheduleNotFound, "schedule_id: no active schedule \(scheduleID) in this app (it never existed, was deleted, or has finished)")
    }
}

/// The `push` of a schedule body, decoded as `POST /v3/push` decodes its body (the other
/// sections are read apart).
private struct SchedulePushBody: Decodable {
    var push: PushRequest

    init(from decoder: any Decoder) throws {
        push = try decoder.container(keyedBy: AnyCodingKey.self).decode(PushRequest.self, forKey: AnyCodingKey(stringValue: "push"))
    }
}
