import Foundation
import HeraldAPNsSandbox
import HeraldCenter
import HeraldCore
import HeraldSMS

/// The SMS sandbox at the local sandbox's inspection endpoint, beside the APNs sandbox:
///
/// - `GET /sms` (`?mobile=` an E.164 number, `?limit=` the newest N): the SMS it took, in
///   order, each with its message, number, text or template, and idempotency key.
/// - `DELETE /sms`: forgets them.
/// - `GET /sms/stats`: how many it took, and how many repeats of a key it took before.
/// - `POST /sms/faults` `{"fail_next": N}` (the next N requests fail, to be retried) and/or
///   `{"delay_ms": M}` (every answer waits M ms); `DELETE /sms/faults` ends both.
///
/// The numbers are shown in full: the endpoint is the developer's, on the loopback address,
/// and nothing in the sandbox reaches a phone.
struct SMSSandboxInspection: SandboxInspectionResource {
    let sandbox: SMSSandbox
    var name: String { "sms" }

    func respond(method: String, segments: [String], query: [String: String], body: [UInt8]) -> SandboxInspectionAnswer {
        switch (segments.first, segments.count, method) {
        case (nil, 0, "GET"):
            var received = sandbox.received
            if let mobile = query["mobile"] { received = received.filter { $0.request.mobile == mobile } }
            if let limit = query["limit"].flatMap(Int.init), limit >= 0 { received = Array(received.suffix(limit)) }
            return SandboxInspectionAnswer(json: received.map(Self.json))
        case (nil, 0, "DELETE"):
            return SandboxInspectionAnswer(json: ["cleared": sandbox.clear()])
        case ("stats", 1, "GET"):
            return SandboxInspectionAnswer(json: ["received": sandbox.received.count, "duplicates": sandbox.duplicates])
        case ("faults", 1, "POST"):
            guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any], !object.isEmpty,
                Set(object.keys).isSubset(of: ["fail_next", "delay_ms"])
            else { return .error(400, Self.faultsUsage) }
            let failNext = object["fail_next"].map { ($0 as? Int).flatMap { (0...1000).contains($0) ? $0 : nil } }
            let delay = object["delay_ms"].map { ($0 as? Int).flatMap { (0...60_000).contains($0) ? $0 : nil } }
            if failNext == .some(nil) || delay == .some(nil) { return .error(400, Self.faultsUsage) }
            if let count = failNext ?? nil { sandbox.fail(next: count) }
            if let milliseconds = delay ?? nil { sandbox.answer(after: .milliseconds(milliseconds)) }
            return SandboxInspectionAnswer(status: 201, json: object)
        case ("faults", 1, "DELETE"):
            sandbox.answerNormally()
            return SandboxInspectionAnswer(json: ["faults": NSNull()])
        case (nil, 0, _), ("stats", 1, _), ("faults", 1, _):
            return .error(405, "method not allowed")
        default:
            return .error(404, "not found")
        }
    }

    private static let faultsUsage = "expected {\"fail_next\": 0 to 1000} and/or {\"delay_ms\": 0 to 60000}"

    private static func json(_ received: SMSSandbox.Received) -> [String: Any] {
        let request = received.request
        var object: [String: Any] = [
            "msg_id": request.msgID,
            "mobile": request.mobile,
            "idempotency_key": request.idempotencyKey,
            "received_at": ISO8601DateFormatter().string(from: received.receivedAt),
        ]
        object["content"] = request.content
        object["template_id"] = request.templateID
        object["params"] = request.params.map { JSONValue.object($0).foundationValue }
        object["sign_id"] = request.signID
        return object
    }
}

extension JSONValue {
    /// The value as `JSONSerialization` takes it.
    fileprivate var foundationValue: Any {
        switch self {
        case .null: NSNull()
        case .bool(let value): value
        case .int(let value): value
        case .double(let value): value
        case .string(let value): value
        case .array(let values): values.map(\.foundationValue)
        case .object(let fields): fields.mapValues(\.foundationValue)
        }
    }
}
