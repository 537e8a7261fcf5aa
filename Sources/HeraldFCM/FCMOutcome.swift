import Foundation

/// What FCM's HTTP v1 API answered a send, classified by its documented error table
/// (firebase.google.com/docs/reference/fcm/rest/v1/ErrorCode).
public enum FCMOutcome: Sendable, Hashable {
    /// Taken: FCM's name for the message (`projects/…/messages/…`).
    case delivered(name: String)
    /// The token is dead for good: UNREGISTERED, SENDER_ID_MISMATCH, or INVALID_ARGUMENT
    /// about the token. Remove it and never use it again.
    case tokenDead(reason: String)
    /// Not taken now; try again, not sooner than `after`: QUOTA_EXCEEDED (at least a
    /// minute), UNAVAILABLE and INTERNAL (Retry-After when FCM gave one), a lost connection.
    case retryLater(reason: String, after: Duration?)
    /// The credentials are refused: THIRD_PARTY_AUTH_ERROR, a 401 a fresh access token
    /// didn't cure, a 403, or the token endpoint refusing the assertion. Stop sending for
    /// the app and alarm.
    case credentialsRefused(reason: String)
    /// The message itself was refused (INVALID_ARGUMENT not about the token, a payload too
    /// big): sending it again would fail again.
    case failed(reason: String, status: Int)
}

/// FCM's error table, as a pure function of the answer (tested row by row).
public enum FCMErrorTable {
    /// The least a QUOTA_EXCEEDED waits: FCM asks for "at least 60 seconds" of backoff.
    public static let quotaBackoff: Duration = .seconds(60)

    /// The outcome of an answer other than 200. `body`: FCM's error JSON; `retryAfter`: the
    /// header, seconds or an HTTP date.
    public static func classify(status: Int, body: some Collection<UInt8>, retryAfter: String?, now: Date = Date()) -> FCMOutcome {
        let error = FCMErrorBody(body)
        let after = retryAfter.flatMap { parseRetryAfter($0, now: now) }
        let code = error.errorCode ?? defaultCode(status: status, grpcStatus: error.status)
        switch code {
        case "UNREGISTERED", "SENDER_ID_MISMATCH":
            return .tokenDead(reason: code)
        case "INVALID_ARGUMENT":
            return error.isAboutToken ? .tokenDead(reason: "InvalidRegistration") : .failed(reason: code, status: status)
        case "QUOTA_EXCEEDED":
            return .retryLater(reason: code, after: max(after ?? .zero, quotaBackoff))
        case "UNAVAILABLE", "INTERNAL", "UNSPECIFIED_ERROR":
            return .retryLater(reason: code, after: after)
        case "THIRD_PARTY_AUTH_ERROR", "UNAUTHENTICATED", "PERMISSION_DENIED":
            return .credentialsRefused(reason: code)
        default:
            return status >= 500 ? .retryLater(reason: code, after: after) : .failed(reason: code, status: status)
        }
    }

    /// FCM's code when the body names none: by HTTP status (and gRPC status), as the
    /// table pairs them.
    static func defaultCode(status: Int, grpcStatus: String?) -> String {
        switch (status, grpcStatus) {
        case (_, "RESOURCE_EXHAUSTED"), (429, _): "QUOTA_EXCEEDED"
        case (400, _): "INVALID_ARGUMENT"
        case (401, _): "UNAUTHENTICATED"
        case (403, _): "PERMISSION_DENIED"
        case (404, _): "UNREGISTERED"
        case (503, _): "UNAVAILABLE"
        case (500, _): "INTERNAL"
        default: "HTTP\(status)"
        }
    }

    /// `Retry-After`: delta-seconds, or an HTTP date.
    static func parseRetryAfter(_ value: String, now: Date) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed), seconds >= 0 { return .seconds(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: trimmed) else { return nil }
        return .seconds(max(0, Int(date.timeIntervalSince(now).rounded(.up))))
    }
}

/// What Herald reads of FCM's error JSON:
/// `{"error": {"code": 404, "message": "…", "status": "NOT_FOUND", "details": [{"@type":
/// "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "UNREGISTERED"},
/// {"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [{"field":
/// "message.token", …}]}]}}`.
struct FCMErrorBody {
    var status: String?
    var message: String?
    var errorCode: String?
    var violatedFields: [String] = []

    init(_ body: some Collection<UInt8>) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let error = object["error"] as? [String: Any]
        else { return }
        status = error["status"] as? String
        message = error["message"] as? String
        for detail in error["details"] as? [[String: Any]] ?? [] {
            if let code = detail["errorCode"] as? String { errorCode = code }
            for violation in detail["fieldViolations"] as? [[String: Any]] ?? [] {
                if let field = violation["field"] as? String { violatedFields.append(field) }
            }
        }
    }

    /// An INVALID_ARGUMENT about the registration token (its form), not the message.
    var isAboutToken: Bool {
        violatedFields.contains("message.token") || message?.lowercased().contains("registration token") == true
    }
}
