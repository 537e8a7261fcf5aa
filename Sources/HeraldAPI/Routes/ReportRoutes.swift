import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

/// `/v3/report`: what became of sent messages.
struct ReportRoutes {
    let store: APIStore
    let auth: Authentication
    let body: JSONBody

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/v3/report/received", access: .app(.reportsRead), use: received)
        routes.on(.post, "/v3/report/status/message", access: .app(.reportsRead), use: status)
    }

    /// Counts per message: targeted, delivered over TCP, sent to APNs, failed (by reason),
    /// waiting, opened, recalled, replaced, expired.
    @Sendable func received(_ request: Request, context: HeraldRequestContext) async throws -> ReportsResponse {
        let app = try await auth.requireApp(request)
        let reports = try await store.reports.messages(appID: app.id, msgIDs: try Self.msgIDs(request))
        return ReportsResponse(reports: reports.map(ReportResponse.init))
    }

    /// The query's `msg_ids`: 1 to 100 comma-separated message ids.
    static func msgIDs(_ request: Request) throws(HeraldError) -> [String] {
        guard let list = request.uri.queryParameters["msg_ids"].map(String.init), !list.isEmpty else {
            throw HeraldError.missingField("msg_ids", "is required (comma-separated message ids)")
        }
        // A form-encoded query writes spaces as "+" (no message id contains one).
        let ids = list.replacingOccurrences(of: "+", with: " ").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if ids.count > 100 { throw .limit("msg_ids", "at most 100 per request (got \(ids.count))") }
        for (index, id) in ids.enumerated() where !Identifiers.isMsgID(id) {
            throw .invalidField("msg_ids[\(index)]", "not a message id")
        }
        return ids
    }

    /// Each registration id's status for one message.
    @Sendable func status(_ request: Request, context: HeraldRequestContext) async throws -> MessageStatusResponse {
        let app = try await auth.requireApp(request)
        let input = try await body.decode(StatusRequest.self, from: request)
        guard Identifiers.isMsgID(input.msgID) else { throw HeraldError.invalidField("msg_id", "not a message id") }
        if input.registrationIDs.isEmpty { throw HeraldError.invalidField("registration_ids", "must not be empty") }
        let ids = try Validation.registrationIDs(input.registrationIDs, field: "registration_ids")
        guard let statuses = try await store.reports.deliveryStatuses(appID: app.id, msgID: input.msgID, registrationIDs: ids) else {
            throw HeraldError(.messageNotFound, "msg_id: no message \(input.msgID) in this app")
        }
        return MessageStatusResponse(msgID: input.msgID, statuses: statuses.mapValues(StatusEntry.init))
    }
}

struct ReportsResponse: ResponseEncodable {
    var reports: [ReportResponse]
}

struct ReportResponse: Encodable {
    struct Failure: Encodable {
        var reason: String
        var count: Int
    }

    var msgID: String
    var targeted: Int
    var tcpDelivered: Int
    var apnsSent: Int
    var apnsFailed: Int
    var apnsFailures: [Failure]
    var waiting: Int
    var opened: Int
    var recalled: Int
    var replaced: Int
    var expired: Int
    var pending: Int
    var done: Bool
    /// A push spread over time: `{"minutes", "audience", "next_batch_at"}`; `targeted` is
    /// how many copies are made so far.
    var spread: SpreadProgress?
    /// Copies waiting for the end of their device's quiet hours.
    var held: Int
    /// Copies not sent: the app's quiet hours (`drop`) or daily cap.
    var dropped: Int
    /// SMS of `sms_message` sent, and failed.
    var smsSent: Int
    var smsFailed: Int
    /// Copies FCM took.
    var fcmSent: Int
    /// What the devices' SDKs reported (receipts).
    var device: Receipts

    struct Receipts: Encodable {
        struct Action: Encodable {
            var action: String
            var count: Int
        }

        var delivered: Int
        var displayed: Int
        var dismissed: Int
        var dropped: Int
        var actions: [Action]

        init(_ receipts: DeviceReceipts) {
            delivered = receipts.delivered
            displayed = receipts.displayed
            dismissed = receipts.dismissed
            dropped = receipts.dropped
            actions = receipts.actions.sorted { $0.key < $1.key }.map { Action(action: $0.key, count: $0.value) }
        }
    }

    enum CodingKeys: String, CodingKey {
        case msgID = "msg_id"
        case targeted, tcpDelivered, apnsSent, apnsFailed, apnsFailures, waiting, opened, recalled, replaced, expired, pending, done
        case spread, held, dropped, smsSent, smsFailed, fcmSent, device
    }

    init(_ report: MessageReport) {
        msgID = report.msgID
        targeted = report.targeted
        tcpDelivered = report.tcpDelivered
        apnsSent = report.apnsSent
        apnsFailed = report.apnsFailed
        apnsFailures = report.apnsFailures.sorted { $0.key < $1.key }.map { Failure(reason: $0.key, count: $0.value) }
        waiting = report.waiting
        opened = report.opened
        recalled = report.recalled
        replaced = report.replaced
        expired = report.expired
        pending = report.pending
        done = report.done
        spread = report.spread
        held = report.held
        dropped = report.dropped
        smsSent = report.smsSent
        smsFailed = report.smsFailed
        fcmSent = report.fcmSent
        device = Receipts(report.device)
    }
}

struct StatusRequest: Decodable {
    var msgID: String
    var registrationIDs: [String]

    enum CodingKeys: String, CodingKey, CaseIterable {
        case msgID = "msg_id"
        case registrationIDs = "registration_ids"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        msgID = try container.decode(String.self, forKey: .msgID)
        registrationIDs = try container.decode([String].self, forKey: .registrationIDs)
    }
}

struct MessageStatusResponse: ResponseEncodable {
    var msgID: String
    var statuses: [String: StatusEntry]

    enum CodingKeys: String, CodingKey {
        case msgID = "msg_id"
        case statuses
    }
}

struct StatusEntry: Encodable {
    var status: String
    var apnsReason: String?
    var opened: Bool

    init(_ status: DeliveryStatus) {
        self.status = status.status
        apnsReason = status.apnsReason
        opened = status.opened
    }
}
