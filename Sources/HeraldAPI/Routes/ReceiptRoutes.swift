import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

/// `POST /v3/devices/{registration_id}/receipts`: what the device's SDK reports about the
/// messages it got (HeraldKit's `ReceiptQueue`): delivered by its Notification Service
/// Extension, displayed, dismissed, opened, an action tapped. As the device (Basic
/// `registration_id:device_secret`) or the app.
struct ReceiptRoutes {
    let store: APIStore
    let auth: Authentication
    let body: JSONBody

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v3/devices/{registration_id}/receipts", access: .appOrDevice(.devicesWrite), use: record)
    }

    @Sendable func record(_ request: Request, context: HeraldRequestContext) async throws -> ReceiptsAnswer {
        let registrationID = try context.parameter("registration_id")
        let principal = try await auth.requireAppOrDevice(request, registrationID: registrationID)
        let receipts = try await body.decode(ReceiptsRequest.self, from: request).validated()
        guard let recorded = try await store.devices.recordReceipts(appID: principal.appID, registrationID: registrationID, receipts) else {
            throw HeraldError(.deviceNotFound, "no device \(registrationID)")
        }
        return ReceiptsAnswer(recorded: recorded)
    }
}

/// `{"receipts": [{"msg_id", "type", "action"?, "reason"?, "at"?, "id"?}]}`: 1 to 100
/// receipts; `action` with type `action` only, `reason` with type `dropped` only.
struct ReceiptsRequest: Decodable {
    struct Item: Decodable {
        var id: String?
        var msgID: String
        var type: String
        var action: String?
        var reason: String?
        var at: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case id, type, action, reason, at
            case msgID = "msg_id"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
            id = try container.decodeIfGiven(String.self, forKey: .id)
            msgID = try container.decode(String.self, forKey: .msgID)
            type = try container.decode(String.self, forKey: .type)
            action = try container.decodeIfGiven(String.self, forKey: .action)
            reason = try container.decodeIfGiven(String.self, forKey: .reason)
            at = try container.decodeIfGiven(String.self, forKey: .at)
        }
    }

    var receipts: [Item]

    enum CodingKeys: String, CodingKey, CaseIterable { case receipts }

    init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        receipts = try container.decode([Item].self, forKey: .receipts)
    }

    static let maxReceipts = 100
    /// The longest reason of a `dropped` receipt, in Unicode scalars (JSON Schema's
    /// `maxLength`).
    static let maxReasonLength = 200

    func validated() throws(HeraldError) -> [DeviceReceipt] {
        guard (1...Self.maxReceipts).contains(receipts.count) else {
            throw .invalidField("receipts", "1 to \(Self.maxReceipts) receipts, not \(receipts.count)")
        }
        let now = Date()
        return try receipts.enumerated().map { (index, item) throws(HeraldError) in
            let field = "receipts[\(index)]"
            guard Identifiers.isMsgID(item.msgID) else { throw .invalidField("\(field).msg_id", "not a msg_id") }
            guard let kind = DeviceReceipt.Kind(rawValue: item.type) else {
                throw .invalidField("\(field).type", "must be one of \(DeviceReceipt.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if kind == .action {
                guard let action = item.action, !action.isEmpty, action.utf8.count <= NotificationCategory.maxIdentifierBytes,
                    !action.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
                else {
                    throw .invalidField("\(field).action", "an action's identifier, 1 to \(NotificationCategory.maxIdentifierBytes) bytes")
                }
            } else if item.action != nil {
                throw .invalidField("\(field).action", "only with type action")
            }
            if kind == .dropped {
                guard let reason = item.reason, !reason.isEmpty, reason.unicodeScalars.count <= Self.maxReasonLength,
                    !reason.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
                else {
                    throw .invalidField("\(field).reason", "why it was dropped, 1 to \(Self.maxReasonLength) characters, no control characters")
                }
            } else if item.reason != nil {
                throw .invalidField("\(field).reason", "only with type dropped")
            }
            if let id = item.id, UUID(uuidString: id) == nil { throw .invalidField("\(field).id", "must be a UUID") }
            var at = now
            if let text = item.at {
                guard let parsed = Self.rfc3339(text) else {
                    throw .invalidField("\(field).at", "must be an ISO 8601 time with a zone, e.g. 2026-11-29T08:00:00Z")
                }
                // A device's clock may be off: never in the future.
                at = min(parsed, now)
            }
            return DeviceReceipt(msgID: item.msgID, kind: kind, action: item.action, reason: item.reason, at: at)
        }
    }
}

extension ReceiptsRequest {
    /// An RFC 3339 time (JSON Schema's `date-time`): `2026-11-29T08:00:00Z`, with or
    /// without a fraction of a second, `Z` or an offset, `T` and `Z` in either case; a leap
    /// second reads as the second before it.
    static func rfc3339(_ text: String) -> Date? {
        let scalars = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= scalars.count else { return nil }
            var value = 0
            for byte in scalars[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard scalars.count >= 20, scalars[4] == UInt8(ascii: "-"), scalars[7] == UInt8(ascii: "-"),
            scalars[10] == UInt8(ascii: "T") || scalars[10] == UInt8(ascii: "t"), scalars[13] == UInt8(ascii: ":"),
            scalars[16] == UInt8(ascii: ":"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        var index = 19
        var fraction = 0.0
        if scalars[index] == UInt8(ascii: ".") {
            var digits = 0
            var scale = 0.1
            index += 1
            while index < scalars.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(scalars[index]) {
                fraction += Double(scalars[index] - UInt8(ascii: "0")) * scale
                scale /= 10
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
        }
        guard index < scalars.count else { return nil }
        var offset = 0
        switch scalars[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard index + 1 == scalars.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == scalars.count, scalars[index + 3] == UInt8(ascii: ":"),
                let hours = number(index + 1..<index + 3), let minutes = number(index + 4..<index + 6), hours < 24, minutes < 60
            else { return nil }
            offset = (hours * 3600 + minutes * 60) * (scalars[index] == UInt8(ascii: "-") ? -1 : 1)
        default:
            return nil
        }
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: min(second, 59))
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == day else { return nil }
        return date.addingTimeInterval(fraction - Double(offset))
    }
}

struct ReceiptsAnswer: ResponseEncodable {
    /// Receipts that named a copy of this device's (the others are ignored).
    var recorded: Int
}
