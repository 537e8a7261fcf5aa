import Foundation
import HeraldFCM
import Testing

/// FCM's documented error table (firebase.google.com/docs/reference/fcm/rest/v1/ErrorCode),
/// a row per error: what Herald does with each answer.
@Suite struct FCMErrorTableTests {
    static func body(_ status: Int, _ grpc: String, code: String?, field: String? = nil, message: String = "x") -> [UInt8] {
        var details: [[String: Any]] = []
        if let code { details.append(["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": code]) }
        if let field {
            details.append(["@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [["field": field, "description": "bad"]]])
        }
        let object: [String: Any] = ["error": ["code": status, "message": message, "status": grpc, "details": details]]
        return Array(try! JSONSerialization.data(withJSONObject: object))
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var status: Int
        var grpc: String
        var code: String?
        var field: String? = nil
        var message: String = "x"
        var retryAfter: String? = nil
        var expected: FCMOutcome
        var testDescription: String { "\(status) \(code ?? grpc) \(field ?? "") \(retryAfter ?? "")" }
    }

    static let rows: [Row] = [
        Row(status: 404, grpc: "NOT_FOUND", code: "UNREGISTERED", expected: .tokenDead(reason: "UNREGISTERED")),
        Row(status: 403, grpc: "PERMISSION_DENIED", code: "SENDER_ID_MISMATCH", expected: .tokenDead(reason: "SENDER_ID_MISMATCH")),
        // INVALID_ARGUMENT about the token (its form) kills it; about the message, the message fails.
        Row(
            status: 400,
            grpc: "INVALID_ARGUMENT",
            code: "INVALID_ARGUMENT",
            field: "message.token",
            expected: .tokenDead(reason: "InvalidRegistration")
        ),
        Row(
            status: 400,
            grpc: "INVALID_ARGUMENT",
            code: "INVALID_ARGUMENT",
            message: "The registration token is not a valid FCM registration token",
            expected: .tokenDead(reason: "InvalidRegistration")
        ),
        Row(
            status: 400,
            grpc: "INVALID_ARGUMENT",
            code: "INVALID_ARGUMENT",
            field: "message.android.ttl",
            expected: .failed(reason: "INVALID_ARGUMENT", status: 400)
        ),
        // Quota: at least a minute, longer when FCM says so.
        Row(status: 429, grpc: "RESOURCE_EXHAUSTED", code: "QUOTA_EXCEEDED", expected: .retryLater(reason: "QUOTA_EXCEEDED", after: .seconds(60))),
        Row(
            status: 429,
            grpc: "RESOURCE_EXHAUSTED",
            code: "QUOTA_EXCEEDED",
            retryAfter: "5",
            expected: .retryLater(reason: "QUOTA_EXCEEDED", after: .seconds(60))
        ),
        Row(
            status: 429,
            grpc: "RESOURCE_EXHAUSTED",
            code: "QUOTA_EXCEEDED",
            retryAfter: "120",
            expected: .retryLater(reason: "QUOTA_EXCEEDED", after: .seconds(120))
        ),
        Row(status: 429, grpc: "RESOURCE_EXHAUSTED", code: nil, expected: .retryLater(reason: "QUOTA_EXCEEDED", after: .seconds(60))),
        // Unavailable and internal: Retry-After when given, else the center's backoff.
        Row(
            status: 503,
            grpc: "UNAVAILABLE",
            code: "UNAVAILABLE",
            retryAfter: "30",
            expected: .retryLater(reason: "UNAVAILABLE", after: .seconds(30))
        ),
        Row(status: 503, grpc: "UNAVAILABLE", code: "UNAVAILABLE", expected: .retryLater(reason: "UNAVAILABLE", after: nil)),
        Row(status: 500, grpc: "INTERNAL", code: "INTERNAL", retryAfter: "7", expected: .retryLater(reason: "INTERNAL", after: .seconds(7))),
        Row(status: 500, grpc: "INTERNAL", code: nil, expected: .retryLater(reason: "INTERNAL", after: nil)),
        Row(status: 500, grpc: "UNKNOWN", code: "UNSPECIFIED_ERROR", expected: .retryLater(reason: "UNSPECIFIED_ERROR", after: nil)),
        // Credentials: alarm and stop.
        Row(status: 401, grpc: "UNAUTHENTICATED", code: "THIRD_PARTY_AUTH_ERROR", expected: .credentialsRefused(reason: "THIRD_PARTY_AUTH_ERROR")),
        Row(status: 401, grpc: "UNAUTHENTICATED", code: nil, expected: .credentialsRefused(reason: "UNAUTHENTICATED")),
        Row(status: 403, grpc: "PERMISSION_DENIED", code: nil, expected: .credentialsRefused(reason: "PERMISSION_DENIED")),
        // No body Herald can read: by status.
        Row(status: 404, grpc: "", code: nil, expected: .tokenDead(reason: "UNREGISTERED")),
        Row(status: 502, grpc: "", code: nil, expected: .retryLater(reason: "HTTP502", after: nil)),
    ]

    @Test(arguments: rows)
    func eachAnswer(_ row: Row) {
        let outcome = FCMErrorTable.classify(
            status: row.status,
            body: row.grpc.isEmpty ? [] : Self.body(row.status, row.grpc, code: row.code, field: row.field, message: row.message),
            retryAfter: row.retryAfter
        )
        #expect(outcome == row.expected)
    }

    @Test func retryAfterAsAnHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let outcome = FCMErrorTable.classify(
            status: 503,
            body: Self.body(503, "UNAVAILABLE", code: "UNAVAILABLE"),
            retryAfter: formatter.string(from: now.addingTimeInterval(90)),
            now: now
        )
        #expect(outcome == .retryLater(reason: "UNAVAILABLE", after: .seconds(90)))
    }
}
