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
    public enum Code: Int, Sendable, Hashable, CaseIterable {
        /// An unexpected failure inside Herald. Details are logged, never returned.
        case internalError = 1000
        /// The body is not JSON, or not the JSON shape the route takes.
        case invalidJSON = 1001
        /// A field is missing or has a value outside what the route accepts.
        case invalidField = 1002
        /// No credentials, or credentials that don't authenticate anyone.
        case unauthorized = 1003
        /// Authenticated, but not allowed to do this (a device acting on another device).
        case forbidden = 1004
        /// No route at this path.
        case routeNotFound = 1005
        /// No app with that key.
        case appNotFound = 1006
        /// No device with that registration id in this app.
        case deviceNotFound = 1007
        /// A documented limit was exceeded; the message names it.
        case limitExceeded = 1010
        /// The request body is larger than the server accepts.
        case payloadTooLarge = 1011
        /// The request conflicts with the current state.
        case conflict = 1012
        /// APNs credentials that don't parse or don't belong together.
        case invalidAPNsCredentials = 1013
        /// The body is not `application/json`.
        case unsupportedMediaType = 1014
        /// The path exists but not with this method.
        case methodNotAllowed = 1015
        /// A dependency (the database) is unavailable; retry later.
        case unavailable = 1016
        /// The app has no APNs credentials.
        case apnsCredentialsNotFound = 1017
        /// No device matches the push's audience; nothing was sent.
        case noAudienceMatch = 1020
        /// No message with that id (or identifier) in this app.
        case messageNotFound = 1021
        /// The message is older than the recall window and can no longer be recalled.
        case recallWindowClosed = 1022
        /// Too many failed authentications from this address or for this key; retry after
        /// the time `Retry-After` gives.
        case tooManyRequests = 1023
        /// The request is not valid HTTP/1.1: its request line, headers or framing
        /// (Content-Length, Transfer-Encoding, a body shorter than announced). The
        /// connection is closed after the answer.
        case malformedRequest = 1024

        /// The HTTP status that goes with the code.
        public var httpStatus: Int {
            switch self {
            case .internalError: 500
            case .invalidJSON, .invalidField, .limitExceeded, .noAudienceMatch, .malformedRequest: 400
            case .unauthorized: 401
            case .forbidden: 403
            case .routeNotFound, .appNotFound, .deviceNotFound, .apnsCredentialsNotFound, .messageNotFound: 404
            case .recallWindowClosed: 410
            case .methodNotAllowed: 405
            case .conflict: 409
            case .payloadTooLarge: 413
            case .unsupportedMediaType: 415
            case .invalidAPNsCredentials: 422
            case .unavailable: 503
            case .tooManyRequests: 429
            }
        }

        /// A short, label-safe name (`invalid_field`), used in logs and metrics.
        public var name: String {
            switch self {
            case .internalError: "internal_error"
            case .invalidJSON: "invalid_json"
            case .invalidField: "invalid_field"
            case .unauthorized: "unauthorized"
            case .forbidden: "forbidden"
            case .routeNotFound: "route_not_found"
            case .appNotFound: "app_not_found"
            case .deviceNotFound: "device_not_found"
            case .limitExceeded: "limit_exceeded"
            case .payloadTooLarge: "payload_too_large"
            case .conflict: "conflict"
            case .invalidAPNsCredentials: "invalid_apns_credentials"
            case .unsupportedMediaType: "unsupported_media_type"
            case .methodNotAllowed: "method_not_allowed"
            case .unavailable: "unavailable"
            case .apnsCredentialsNotFound: "apns_credentials_not_found"
            case .noAudienceMatch: "no_audience_match"
            case .messageNotFound: "message_not_found"
            case .recallWindowClosed: "recall_window_closed"
            case .tooManyRequests: "too_many_requests"
            case .malformedRequest: "malformed_request"
            }
        }
    }
}

extension HeraldError {
    /// A field failed validation.
    public static func invalidField(_ field: String, _ reason: String) -> HeraldError {
        HeraldError(.invalidField, "\(field): \(reason)")
    }

    /// A documented limit was exceeded.
    public static func limit(_ field: String, _ reason: String) -> HeraldError {
        HeraldError(.limitExceeded, "\(field): \(reason)")
    }
}
