import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import Logging
import ServiceLifecycle

/// The messages' history (searched by msg_id, text, day and source), a message's page with
/// its funnel (live while it is delivered: server-sent events the console's script reads),
/// its exact body, and recall and replace.
extension ConsoleRoutes {
    @Sendable func messages(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        guard let (app, _) = try await member(session, context, needs: .reportsRead) else { return noApp(session, context) }
        let parameters = request.uri.queryParameters
        func field(_ name: String) -> String? {
            let value = (parameters.get(name) ?? "").trimmingCharacters(in: .whitespaces)
            return value.isEmpty ? nil : String(value.prefix(200))
        }
        var query = ConsoleStore.MessageQuery(
            msgID: field("msg_id"),
            text: field("q"),
            source: field("source").flatMap(ConsoleStore.MessageSource.init)
        )
        var problem: String?
        if let day = field("day") {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyy-MM-dd"
            query.day = formatter.date(from: day)
            if query.day == nil { problem = "The day is written 2026-11-29." }
        }
        let found = problem == nil ? try await store.console.messages(appID: app.id, query) : []
        let formatter = ISO8601DateFormatter()
        let sources = [("", "Any source")] + ConsoleStore.MessageSource.allCases.map { ($0.rawValue, $0.rawValue) }
        let values: [String: Any] = [
            "appKey": app.appKey, "appName": app.name,
            "query": ["msgID": field("msg_id") ?? "", "q": field("q") ?? "", "day": field("day") ?? ""],
            "sources": sources.map { ["value": $0.0, "label": $0.1, "selected": $0.0 == (field("source") ?? "")] },
            "messages": found.map {
                [
                    "msgID": $0.msgID, "sentAt": formatter.string(from: $0.sentAt), "alert": $0.alert ?? "—", "source": $0.source.rawValue,
                    "recalled": $0.recalled,
                ]
            },
            "hasMessages": !found.isEmpty, "messageCount": found.count, "error": problem as Any,
        ]
        return pages.page("messages", title: "Messages", values, person: session)
    }

    @Sendable func message(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        guard let (app, role) = try await member(session, context, needs: .reportsRead) else { return noApp(session, context) }
        let msgID = try context.parameter("msg_id")
        guard Identifiers.isMsgID(msgID), let message = try await store.console.message(appID: app.id, msgID: msgID),
            let report = try await store.reports.messages(appID: app.id, msgIDs: [msgID]).first
        else {
            return pages.page(
                "problem",
                title: "No such message",
                ["message": "No message \(msgID) in \(app.name)."],
                person: session,
                status: .notFound
            )
        }
        let formatter = ISO8601DateFormatter()
        let recallable = message.recalledAt == nil && Date().timeIntervalSince(message.sentAt) <= pushes.recallWindow.timeInterval
        let values: [String: Any] = [
            "appKey": app.appKey, "appName": app.name, "csrf": session.csrf,
            "message": [
                "msgID": message.msgID, "sentAt": formatter.string(from: message.sentAt), "identifier": message.identifier,
                "source": message.source.rawValue, "body": Self.pretty(message.body),
                "expiresAt": formatter.string(from: message.expiresAt),
                "recalledAt": message.recalledAt.map(formatter.string(from:)) as Any,
            ],
            "funnel": Self.funnel(report).map { ["key": $0.key, "label": $0.label, "count": $0.count] },
            "failures": report.apnsFailures.sorted { $0.key < $1.key }.map { ["reason": $0.key, "count": $0.value] },
            "hasFailures": !report.apnsFailures.isEmpty, "done": report.done,
            "mayRecall": role.scopes.grants(.recall) && recallable,
            "mayReplace": role.scopes.grants(.compose) && message.recalledAt == nil,
        ]
        return pages.page("message", title: "Message \(msgID)", values, person: session)
    }

    /// The funnel as server-sent events: an `event: funnel` with its counts (JSON) each time
    /// they change, until the message is done and has stayed so a little while, or after
    /// five minutes (the script then shows the last counts).
    @Sendable func funnelStream(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { throw HeraldError(.unauthorized, "sign in to the console") }
        guard let (app, _) = try await member(session, context, needs: .reportsRead) else {
            throw HeraldError(.appNotFound, "no app that you can see")
        }
        let msgID = try context.parameter("msg_id")
        guard Identifiers.isMsgID(msgID), try await store.console.message(appID: app.id, msgID: msgID) != nil else {
            throw HeraldError(.messageNotFound, "msg_id: no message \(msgID) in this app")
        }
        let store = store
        let body = ResponseBody { writer in
            let end = ContinuousClock.now + .seconds(300)
            var last = ""
            var doneSince: ContinuousClock.Instant?
            try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
            while ContinuousClock.now < end, !Task.isCancelled, !Task.isShuttingDownGracefully {
                guard let report = try await store.reports.messages(appID: app.id, msgIDs: [msgID]).first else { break }
                let json = Self.funnelJSON(report)
                if json != last {
                    try await writer.write(ByteBuffer(string: "event: funnel\ndata: \(json)\n\n"))
                    last = json
                }
                if report.done {
                    doneSince = doneSince ?? .now
                    // A recall or a late acknowledgement still changes a done message's counts.
                    if ContinuousClock.now - doneSince! > .seconds(60) { break }
                } else {
                    doneSince = nil
                }
                try await Task.sleep(for: .milliseconds(500))
            }
            try await writer.write(ByteBuffer(string: "event: end\ndata: {}\n\n"))
            try await writer.finish(nil)
        }
        var headers = ConsolePages.securityHeaders
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: body)
    }

    @Sendable func recallMessage(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        guard Self.isGenuine(request, try await FormBody.fields(request)) else {
            return forbidden("This form is stale or from another site: reload the page.")
        }
        guard let (app, _) = try await member(session, context, needs: .recall) else {
            return pages.page(
                "problem",
                title: "Not yours to recall",
                ["message": "Recalling needs the operator or admin role on this app."],
                person: session,
                status: .forbidden
            )
        }
        let msgID = try context.parameter("msg_id")
        RouteAccess.serving?.audit?.identify(actor: session.signedIn.actor, appID: app.id)
        do {
            _ = try await store.recall(appID: app.id, msgIDs: [msgID], window: pushes.recallWindow.timeInterval)
        } catch let error as HeraldError {
            return pages.page("problem", title: "Not recalled", ["message": error.message], person: session, status: .badRequest)
        }
        logger.info("recalled from the console", metadata: ["herald.msg_id": "\(msgID)", "herald.user": "\(session.signedIn.person.email)"])
        return ConsolePages.redirect(to: "/console/apps/\(app.appKey)/messages/\(msgID)")
    }

    /// The funnel's steps, in the order a copy goes through them.
    static func funnel(_ report: MessageReport) -> [(key: String, label: String, count: Int)] {
        [
            ("targeted", "Targeted", report.targeted),
            ("waiting", "Waiting (offline, in the inbox)", report.waiting),
            ("tcp_delivered", "Acknowledged over MQTT", report.tcpDelivered),
            ("apns_sent", "Accepted by APNs", report.apnsSent),
            ("fcm_sent", "Accepted by FCM", report.fcmSent),
            ("apns_failed", "Failed at APNs or FCM", report.apnsFailed),
            ("held", "Held by quiet hours", report.held),
            ("dropped", "Dropped (quiet hours or daily cap)", report.dropped),
            ("sms_sent", "SMS sent", report.smsSent),
            ("sms_failed", "SMS failed", report.smsFailed),
            ("delivered", "Received (the SDK's receipt)", report.device.delivered),
            ("opened", "Opened", report.opened),
            ("recalled", "Recalled", report.recalled),
            ("replaced", "Replaced", report.replaced),
            ("expired", "Expired", report.expired),
        ]
    }

    static func funnelJSON(_ report: MessageReport) -> String {
        var object: [String: Any] = ["done": report.done]
        for step in funnel(report) { object[step.key] = step.count }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// Stored JSON, indented for reading (as stored when it isn't JSON).
    static func pretty(_ json: String) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)),
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
        else { return json }
        return String(decoding: data, as: UTF8.self)
    }
}
