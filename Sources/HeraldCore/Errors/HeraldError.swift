/// An error Herald reports to a client: a stable numeric code, the HTTP status that goes
/// with it, and a message meant for the operator who sent the request.
///
/// The message never carries database text or secrets; it names the field or the limit
/// that was violated so the caller can fix the request.
public struct HeraldError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The stable code clients switch on.
    public let code: Code
    /// A human-readable explanation.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "HeraldError(\(code.rawValue) \(code.name)): \(message)" }

    /// Stable error codes. Values never change meaning once released; new cases get new values.
    ///
    /// Where JPush's v3 API has the condition, the code is JPush's number with JPush's
    /// meaning (its Push API table: 1000–1030, 2002–2004; its Schedule API table for the
    /// two conditions only schedules have, 8100 and 8104), so a client written against
    /// JPush reads it right. Conditions JPush has no code for are Herald's own, in 9xxx, a
    /// range no JPush API uses (90xx the request, 91xx what was not found, 92xx state,
    /// 93xx APNs credentials). Every route answers from this one table: JPush's Device API
    /// numbers the same conditions 7000–7030 and its Report API 3001–3005, but Herald
    /// gives each condition one code wherever it happens. docs/errors.md lists them all,
    /// with the sources of JPush's numbers.
    public enum Code: Int, Sendable, Hashable, CaseIterable {
        // JPush's codes.

        /// An unexpected failure inside Herald. Details are logged, never returned. (JPush:
        /// 1000, system internal error.)
        case internalError = 1000
        /// The path exists but not with this method. (JPush: 1001, "only HTTP POST is
        /// supported", answered with 405.)
        case methodNotAllowed = 1001
        /// A required field is absent; the message names it. (JPush: 1002, missing
        /// required parameter.)
        case missingField = 1002
        /// A field has a value the route does not accept; the message names it. (JPush:
        /// 1003, invalid parameter value.)
        case invalidField = 1003
        /// No credentials, or credentials that don't authenticate anyone. (JPush: 1004,
        /// authentication failed.)
        case unauthorized = 1004
        /// The message is too large: the request body is over the server's limit, or the
        /// notification or message is over its documented size. (JPush: 1005, message
        /// body too large; JPush answers it with 400, Herald with 413, the status HTTP
        /// has for it.)
        case payloadTooLarge = 1005
        /// No app with that key. (JPush: 1008, invalid app_key.)
        case appNotFound = 1008
        /// The body has a field the route does not know; the message names it. (JPush:
        /// 1009, unsupported key in the push object.)
        case unsupportedKey = 1009
        /// No device matches the push's audience; nothing was sent. (JPush: 1011, no
        /// target matches.)
        case noAudienceMatch = 1011
        /// A dependency (the database) did not answer in time, the node is draining, or no
        /// message id slot is free; retry later. (JPush: 1030, internal service timeout,
        /// retry later, 503.)
        case unavailable = 1030
        /// Too many requests; retry after the time `Retry-After` gives. Herald answers it
        /// to too many failed authentications from one address or for one key.
        ///
        /// JPush's 429 code is 2002 in its current documents (the Push API's code table
        /// and the API overview's rate limit, `{"code": 2002, "message": "Rate limit
        /// exceeded"}`); 2001 appeared only in its older, withdrawn rate-limit page. A
        /// JPush client written today switches on 2002, so Herald answers 2002.
        case tooManyRequests = 2002
        /// Authenticated, but not allowed to do this (a device acting on another device).
        /// (JPush: 2004, no permission for this operation.)
        case forbidden = 2004
        /// A schedule's own sections are invalid (name, enabled, trigger, time_zone,
        /// local_time, cid, the page asked for), the app has as many active schedules as it
        /// may, or the change is one JPush refuses (single to periodical, a finished
        /// schedule). The push inside a schedule answers the push's own codes. (JPush's
        /// Schedule API: 8100, invalid parameter, 400.)
        case invalidSchedule = 8100
        /// No schedule with that id in this app, or it has finished (its last occurrence
        /// passed; its msg_ids stay readable). (JPush's Schedule API: 8104, the schedule
        /// does not exist or was already sent, 404.)
        case scheduleNotFound = 8104

        // Herald's own codes: 90xx the request.

        /// The body is not JSON, or not the JSON shape the route takes.
        case invalidJSON = 9001
        /// A documented count or length limit was exceeded (ids per request, tags per
        /// device, bytes per tag); the message names it.
        case limitExceeded = 9002
        /// The request is not valid HTTP/1.1: its request line, headers or framing
        /// (Content-Length, Transfer-Encoding, a body shorter than announced). The
        /// connection is closed after the answer.
        case malformedRequest = 9003
        /// The body is not `application/json`.
        case unsupportedMediaType = 9004

        // 91xx: what was asked for is not there.

        /// No route at this path.
        case routeNotFound = 9101
        /// No device with that registration id in this app.
        case deviceNotFound = 9102
        /// No message with that id (or identifier) in this app.
        case messageNotFound = 9103
        /// The app has no APNs credentials.
        case apnsCredentialsNotFound = 9104
        /// No webhook with that id in this app.
        case webhookNotFound = 9105
        /// The app defines no notification category with that identifier.
        case categoryNotFound = 9106
        /// The app has no SMS provider of its own.
        case smsProviderNotFound = 9107
        /// No API key with that id (in this app, or among the admin keys).
        case keyNotFound = 9108
        /// No console user with that email or id.
        case userNotFound = 9109
        /// No push waiting for approval with that id in this app.
        case approvalNotFound = 9110
        /// The app has no FCM credentials (service account).
        case fcmCredentialsNotFound = 9111

        // 92xx: the request meets the current state.

        /// The request conflicts with the current state.
        case conflict = 9201
        /// The message is older than the recall window and can no longer be recalled.
        case recallWindowClosed = 9202
        /// A person's destructive action needs the password again (the session's last
        /// confirmation is too old): `POST /auth/v1/session/confirm`, then retry.
        case confirmationRequired = 9203

        // 93xx: APNs credentials.

        /// APNs credentials that don't parse or don't belong together.
        case invalidAPNsCredentials = 9301
        /// An FCM service account that doesn't parse, is for another project, has a key
        /// that doesn't sign, or that Google (or the sandbox) refuses.
        case invalidFCMCredentials = 9302

        /// The HTTP status that goes with the code.
        public var httpStatus: Int {
            switch self {
            case .internalError: 500
            case .missingField, .invalidField, .unsupportedKey, .noAudienceMatch, .invalidSchedule: 400
            case .invalidJSON, .limitExceeded, .malformedRequest: 400
            case .unauthorized: 401
            case .forbidden, .confirmationRequired: 403
            case .routeNotFound, .appNotFound, .deviceNotFound, .apnsCredentialsNotFound, .messageNotFound, .scheduleNotFound,
                .webhookNotFound, .smsProviderNotFound, .keyNotFound:
                404
            case .categoryNotFound, .userNotFound, .approvalNotFound, .fcmCredentialsNotFound: 404
            case .methodNotAllowed: 405
            case .conflict: 409
            case .recallWindowClosed: 410
            case .payloadTooLarge: 413
            case .unsupportedMediaType: 415
            case .invalidAPNsCredentials, .invalidFCMCredentials: 422
            case .tooManyRequests: 429
            case .unavailable: 503
            }
        }

        /// A short, label-safe name (`invalid_field`), used in logs and metrics.
        public var name: String {
            switch self {
            case .internalError: "internal_error"
            case .methodNotAllowed: "method_not_allowed"
            case .missingField: "missing_field"
            case .invalidField: "invalid_field"
            case .unauthorized: "unauthorized"
            case .payloadTooLarge: "payload_too_large"
            case .appNotFound: "app_not_found"
            case .unsupportedKey: "unsupported_key"
            case .noAudienceMatch: "no_audience_match"
            case .unavailable: "unavailable"
            case .tooManyRequests: "too_many_requests"
            case .forbidden: "forbidden"
            case .invalidSchedule: "invalid_schedule"
            case .scheduleNotFound: "schedule_not_found"
            case .invalidJSON: "invalid_json"
            case .limitExceeded: "limit_exceeded"
            case .malformedRequest: "malformed_request"
            case .unsupportedMediaType: "unsupported_media_type"
            case .routeNotFound: "route_not_found"
            case .deviceNotFound: "device_not_found"
            case .messageNotFound: "message_not_found"
            case .apnsCredentialsNotFound: "apns_credentials_not_found"
            case .webhookNotFound: "webhook_not_found"
            case .categoryNotFound: "category_not_found"
            case .smsProviderNotFound: "sms_provider_not_found"
            case .keyNotFound: "key_not_found"
            case .userNotFound: "user_not_found"
            case .approvalNotFound: "approval_not_found"
            case .conflict: "conflict"
            case .recallWindowClosed: "recall_window_closed"
            case .confirmationRequired: "confirmation_required"
            case .invalidAPNsCredentials: "invalid_apns_credentials"
            case .invalidFCMCredentials: "invalid_fcm_credentials"
            case .fcmCredentialsNotFound: "fcm_credentials_not_found"
            }
        }

        /// Whether the number and its meaning are JPush's (the others are Herald's own).
        public var isJPush: Bool { rawValue < 9000 }
    }
}

extension HeraldError {
    /// A required field is absent.
    public static func missingField(_ field: String, _ reason: String = "is required") -> HeraldError {
        HeraldError(.missingField, "\(field): \(reason)")
    }

    /// A field failed validation.
    public static func invalidField(_ field: String, _ reason: String) -> HeraldError {
        HeraldError(.invalidField, "\(field): \(reason)")
    }

    /// A documented limit was exceeded.
    public static func limit(_ field: String, _ reason: String) -> HeraldError {
        HeraldError(.limitExceeded, "\(field): \(reason)")
    }

    /// The notification or message is over its documented size.
    public static func tooLarge(_ field: String, _ reason: String) -> HeraldError {
        HeraldError(.payloadTooLarge, "\(field): \(reason)")
    }
}
