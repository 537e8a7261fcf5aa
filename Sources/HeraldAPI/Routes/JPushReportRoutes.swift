import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

/// JPush's report API at JPush's paths (`report.jpush.cn/v3/...`), beside Herald's own
/// `/v3/report/...`, made of the same deliveries (see ``DeliveryBreakdown``).
///
/// JPush's long-connection channel ("JPush", `jg_*`) is Herald's MQTT connection; APNs is
/// APNs. Herald has no Android vendor channels and doesn't know when a notification is
/// displayed: those numbers are `null`, which is how JPush says it has no data. Message ids
/// that name no message of this app are left out, as in `/v3/report/received`.
struct JPushReportRoutes {
    let store: APIStore
    let auth: Authentication
    let body: JSONBody

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/v3/received", access: .app(.reportsRead), use: received)
        routes.on(.get, "/v3/received/detail", access: .app(.reportsRead), use: receivedDetail)
        routes.on(.post, "/v3/status/message", access: .app(.reportsRead), use: status)
        routes.on(.get, "/v3/messages/detail", access: .app(.reportsRead), use: messagesDetail)
        routes.on(.get, "/v3/messages", access: .app(.reportsRead), use: messages)
    }

    @Sendable func received(_ request: Request, context: HeraldRequestContext) async throws -> VerbatimKeysResponse<[ReceivedEntry]> {
        try await breakdowns(request, shown: ReceivedEntry.init)
    }

    @Sendable func receivedDetail(
        _ request: Request,
        context: HeraldRequestContext
    ) async throws -> VerbatimKeysResponse<[ReceivedDetailEntry]> {
        try await breakdowns(request, shown: ReceivedDetailEntry.init)
    }

    @Sendable func messagesDetail(
        _ request: Request,
        context: HeraldRequestContext
    ) async throws -> VerbatimKeysResponse<[MessageDetailEntry]> {
        try await breakdowns(request, shown: MessageDetailEntry.init)
    }

    @Sendable func messages(_ request: Request, context: HeraldRequestContext) async throws -> VerbatimKeysResponse<[MessagesEntry]> {
        try await breakdowns(request, shown: MessagesEntry.init)
    }

    /// The app's breakdowns of the query's `msg_ids`, each in one of JPush's report shapes.
    private func breakdowns<Entry: Encodable>(
        _ request: Request,
        shown entry: (DeliveryBreakdown) -> Entry
    ) async throws -> VerbatimKeysResponse<[Entry]> {
        let app = try await auth.requireApp(request)
        let breakdowns = try await store.reports.breakdowns(appID: app.id, msgIDs: try ReportRoutes.msgIDs(request))
        return VerbatimKeysResponse(breakdowns.map(entry))
    }

    /// Each registration id's status for one message, as JPush's codes: 0 received (over
    /// the connection, or accepted by APNs, after which nothing more is known), 1 not
    /// received (yet, or ever: waiting, failed, recalled, replaced, expired), 2 not a device
    /// of this app, 3 a device of this app the message was not for. JPush's 4 (system
    /// error) is never given: a failure fails the whole request.
    @Sendable func status(
        _ request: Request,
        context: HeraldRequestContext
    ) async throws -> VerbatimKeysResponse<[String: JPushStatusEntry]> {
        let app = try await auth.requireApp(request)
        let input = try await body.decode(JPushStatusRequest.self, from: request)
        guard Identifiers.isMsgID(input.msgID) else { throw HeraldError.invalidField("msg_id", "not a message id") }
        let ids = input.registrationIDs
        if ids.isEmpty { throw HeraldError.invalidField("registration_ids", "must not be empty") }
        if ids.count > Limits.maxIDsPerBulkCall {
            throw HeraldError.limit("registration_ids", "at most \(Limits.maxIDsPerBulkCall) per request (got \(ids.count))")
        }
        if let date = input.date, !Self.isDay(date) { throw HeraldError.invalidField("date", "expected yyyy-mm-dd") }
        guard let statuses = try await store.reports.deliveryStatuses(appID: app.id, msgID: input.msgID, registrationIDs: ids) else {
            throw HeraldError(.messageNotFound, "msg_id: no message \(input.msgID) in this app")
        }
        let devices = try await store.knownRegistrationIDs(appID: app.id, ids.filter(Identifiers.isRegistrationID))
        var answer: [String: JPushStatusEntry] = [:]
        for id in ids {
            let code: Int =
                switch (devices.contains(id), statuses[id]?.status) {
                case (false, _): 2
                case (true, "not_targeted"), (true, nil): 3
                case (true, "delivered_tcp"), (true, "sent_apns"), (true, "sent_fcm"): 0
                default: 1
                }
            answer[id] = JPushStatusEntry(status: code)
        }
        return VerbatimKeysResponse(answer)
    }

    /// `yyyy-mm-dd`: JPush's `date` (the day to look in). Herald keeps a message's statuses
    /// as long as the message, so the day only has to be well formed.
    static func isDay(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.map(\.count) == [4, 2, 2], parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }) else { return false }
        return (1...12).contains(Int(parts[1]) ?? 0) && (1...31).contains(Int(parts[2]) ?? 0)
    }
}
