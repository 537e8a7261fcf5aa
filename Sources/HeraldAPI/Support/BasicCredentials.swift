import Foundation

/// The user and password of an `Authorization: Basic base64(user:password)` header, the
/// way every credential of the API but the admin token is sent.
struct BasicCredentials: Sendable, Hashable {
    var user: String
    var password: String

    /// Nil for a header that is not Basic, or not base64 of UTF-8 `user:password`.
    init?(authorization header: String) {
        guard header.hasPrefix("Basic "),
            let data = Data(base64Encoded: String(Substring(header).dropFirst("Basic ".count).trimmingHTTPWhitespace)),
            let decoded = String(data: data, encoding: .utf8),
            let colon = decoded.firstIndex(of: ":")
        else { return nil }
        user = String(decoded[..<colon])
        password = String(decoded[decoded.index(after: colon)...])
    }
}
