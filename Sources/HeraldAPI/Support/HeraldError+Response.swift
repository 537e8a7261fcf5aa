import Foundation
import HTTPTypes
import HeraldCore
import Hummingbird
import NIOCore

extension HeraldError: HTTPResponseError {
    public var status: HTTPResponse.Status { .init(code: code.httpStatus) }

    /// `{"error": {"code": 1002, "message": "..."}}`
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        try response(retryAfter: code == .unavailable ? Self.unavailableRetryAfter : nil)
    }

    /// The error response, with `Retry-After: seconds` when given.
    func response(retryAfter seconds: Int?) throws -> Response {
        let data = try HeraldRequestContext.encoder.encode(ErrorBody(error: .init(code: code.rawValue, message: message)))
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if code == .unauthorized {
            headers[.wwwAuthenticate] = "Basic realm=\"herald\""
        }
        if let seconds {
            headers[.retryAfter] = String(seconds)
        }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The `Retry-After` of a 503: about how long a pool takes to reconnect once
    /// PostgreSQL is back.
    static let unavailableRetryAfter = 5
}

/// The JSON shape of every error response.
struct ErrorBody: Codable {
    struct Detail: Codable {
        let code: Int
        let message: String
    }
    let error: Detail
}
