import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The delivery event log: `GET /v3/events` (the app's event stream, paged by an opaque
/// cursor, long-polled or as server-sent events), `GET /v3/messages/{msg_id}/devices/
/// {registration_id}` (one copy's timeline), both as the app; and
/// `/admin/v1/apps/{app_key}/events`, whether the app records every event, as the admin.
struct EventRoutes {
    let store: APIStore
    let events: EventStore
    let auth: Authentication
    let body: JSONBody
    /// How often a waiting stream looks for new events (it never relies on a NOTIFY).
    var pollInterval: Duration = .milliseconds(200)

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/v3/events", access: .app(.events), use: stream)
        routes.on(.get, "/v3/messages/{msg_id}/devices/{registration_id}", access: .app(.reportsRead), use: timeline)
        routes.on(.get, "/admin/v1/apps/{app_key}/events", access: .admin, use: settings)
        routes.on(.put, "/admin/v1/apps/{app_key}/events", access: .admin, use: changeSettings)
    }

    /// The longest `wait`, in seconds.
    static let maxWait = 30
    /// The most events a page holds.
    static let maxLimit = 1000
    /// How long a server-sent event stream stays open before it ends (the client
    /// reconnects with `Last-Event-ID`); a comment goes out every `keepAlive` meanwhile, so
    /// a stream whose client went away ends soon.
    static let streamLifetime: Duration = .seconds(300)
    static let keepAlive: Duration = .seconds(5)

    @Sendable func stream(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let app = try await auth.requireApp(request)
        let query = try StreamQuery(request)
        if request.headers[.accept]?.contains("text/event-stream") == true {
            return serverSentEvents(appID: app.id, query: query)
        }
        let deadline = ContinuousClock.now + .seconds(query.wait)
        var page = try await events.events(appID: app.id, after: query.cursor, types: query.types, limit: query.limit)
        while page.events.isEmpty, ContinuousClock.now < deadline, !Task.isCancelled {
            try await Task.sleep(for: min(pollInterval, deadline - ContinuousClock.now))
            page = try await events.events(appID: app.id, after: page.cursor, types: query.types, limit: query.limit)
        }
        var body = Array(#"{"events":["#.utf8)
        for (index, event) in page.events.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body += event.json
        }
        body += Array(#"],"cursor":"\#(page.cursor)"}"#.utf8)
        return Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8", .contentLength: String(body.count)],
            body: .init(byteBuffer: ByteBuffer(bytes: body))
        )
    }

    /// The stream as server-sent events: one `event: delivery` per event with `id:` its
    /// cursor, so a client that reconnects with `Last-Event-ID` resumes after it.
    private func serverSentEvents(appID: Int64, query: StreamQuery) -> Response {
        let events = events
        let pollInterval = pollInterval
        let body = ResponseBody { writer in
            var cursor = query.cursor
            let end = ContinuousClock.now + Self.streamLifetime
            var lastWrite = ContinuousClock.now
            try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
            // Ends when the server shuts down too (the client reconnects elsewhere or later).
            while ContinuousClock.now < end, !Task.isCancelled, !Task.isShuttingDownGracefully {
                let page = try await events.events(appID: appID, after: cursor, types: query.types, limit: query.limit)
                var out = ByteBuffer()
                for event in page.events {
                    out.writeString("id: \(event.cursor)\nevent: delivery\ndata: ")
                    out.writeBytes(event.json)
                    out.writeString("\n\n")
                }
                cursor = page.cursor
                if out.readableBytes == 0, ContinuousClock.now - lastWrite >= Self.keepAlive { out.writeString(": keep-alive\n\n") }
                if out.readableBytes > 0 {
                    try await writer.write(out)
                    lastWrite = ContinuousClock.now
                }
                if page.events.count < query.limit { try await Task.sleep(for: pollInterval) }
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: body
        )
    }

    @Sendable func timeline(_ request: Request, context: HeraldRequestContext) async throws -> TimelineResponse {
        let app = try await auth.requireApp(request)
        let msgID = try context.parameter("msg_id")
        let registrationID = try context.parameter("registration_id")
        switch try await events.timeline(appID: app.id, msgID: msgID, registrationID: registrationID) {
        case .success(let timeline):
            return TimelineResponse(msgID: msgID, registrationID: registrationID, timeline: timeline)
        case .failure(.messageNotFound):
            throw HeraldError(.messageNotFound, "msg_id: no message \(msgID) in this app")
        case .failure(.deviceNotFound):
            throw HeraldError(.deviceNotFound, "registration_id: no device \(registrationID) in this app")
        }
    }

    @Sendable func settings(_ request: Request, context: HeraldRequestContext) async throws -> EventSettingsResponse {
        try await auth.requireAdmin(request)
        guard let settings = try await store.eventsEnabled(appKey: try context.parameter("app_key")) else { throw AdminRoutes.appNotFound }
        return EventSettingsResponse(enabled: settings.enabled, webhooks: settings.webhooks)
    }

    @Sendable func changeSettings(_ request: Request, context: HeraldRequestContext) async throws -> EventSettingsResponse {
        try await auth.requireAdmin(request)
        let appKey = try context.parameter("app_key")
        let input = try await body.decode(EventSettingsRequest.self, from: request)
        guard try await store.setEventsEnabled(appKey: appKey, input.enabled),
            let settings = try await store.eventsEnabled(appKey: appKey)
        else { throw AdminRoutes.appNotFound }
        context.logger.info("app events \(input.enabled ? "enabled" : "disabled")", metadata: ["herald.app_key": "\(appKey)"])
        return EventSettingsResponse(enabled: settings.enabled, webhooks: settings.webhooks)
    }
}

/// The query of `GET /v3/events`.
struct StreamQuery {
    var cursor: EventCursor
    var types: [DeliveryEventType]
    var limit: Int
    var wait: Int

    init(_ request: Request) throws(HeraldError) {
        let query = request.uri.queryParameters
        // `Last-Event-ID` (a reconnecting event source) stands for `after`.
        let after = query["after"].map(String.init) ?? request.headers[HTTPField.Name("Last-Event-ID")!]
        if let after, !after.isEmpty {
            guard let cursor = EventCursor(after) else { throw .invalidField("after", "not a cursor this API handed out") }
            self.cursor = cursor
        } else {
            cursor = .start
        }
        if let list = query["types"].map(String.init), !list.isEmpty {
            guard let types = DeliveryEventType.list(list) else {
                throw .invalidField("types", "one of: " + DeliveryEventType.allCases.map(\.rawValue).joined(separator: ", "))
            }
            self.types = types
        } else {
            types = []
        }
        limit = try Self.int(query["limit"].map(String.init), field: "limit", default: 100, in: 1...EventRoutes.maxLimit)
        wait = try Self.int(query["wait"].map(String.init), field: "wait", default: 0, in: 0...EventRoutes.maxWait)
    }

    private static func int(_ text: String?, field: String, default value: Int, in range: ClosedRange<Int>) throws(HeraldError) -> Int {
        guard let text else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw .invalidField(field, "must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }
}

struct TimelineResponse: ResponseEncodable {
    struct Step: Encodable {
        var type: String
        var at: Date?
        var data: JSONValue
    }

    var msgID: String
    var registrationID: String
    var source: String
    var state: String?
    var timeline: [Step]

    init(msgID: String, registrationID: String, timeline: CopyTimeline) {
        self.msgID = msgID
        self.registrationID = registrationID
        source = timeline.source.rawValue
        state = timeline.state
        self.timeline = timeline.steps.map { Step(type: $0.type.rawValue, at: $0.at, data: $0.data) }
    }

    enum CodingKeys: String, CodingKey {
        case msgID = "msg_id"
        case registrationID = "registration_id"
        case source, state, timeline
    }
}

struct EventSettingsRequest: Decodable {
    var enabled: Bool
}

struct EventSettingsResponse: ResponseEncodable {
    /// The app's own setting.
    var enabled: Bool
    /// Its webhooks (any makes it record every event, whatever `enabled` says).
    var webhooks: Int
    /// Whether it records every event.
    var recording: Bool { enabled || webhooks > 0 }

    enum CodingKeys: String, CodingKey {
        case enabled, webhooks, recording
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(enabled, forKey: .enabled)
        try container.encode(webhooks, forKey: .webhooks)
        try container.encode(recording, forKey: .recording)
    }
}
