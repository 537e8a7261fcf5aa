import Crypto
import Foundation

/// How a webhook request is signed: `X-Herald-Signature: sha256=<hex>`, the HMAC-SHA256 of
/// `"<timestamp>.<body>"` under the endpoint's secret, with the timestamp (seconds since
/// 1970) in `X-Herald-Timestamp`. Signing the timestamp with the body lets a receiver
/// refuse a replayed request (docs/webhooks.md has a check in a few lines).
public enum WebhookSignature {
    public static let timestampHeader = "X-Herald-Timestamp"
    public static let signatureHeader = "X-Herald-Signature"

    /// The value of `X-Herald-Signature` for `body` sent at `timestamp`.
    public static func header(secret: String, timestamp: Int64, body: [UInt8]) -> String {
        var message = Array("\(timestamp).".utf8)
        message += body
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Array(secret.utf8)))
        return "sha256=" + Hex.encode(Array(mac))
    }

    /// Whether `header` signs `body` at `timestamp` with `secret` (compared in constant time).
    public static func isValid(_ header: String, secret: String, timestamp: Int64, body: [UInt8]) -> Bool {
        guard header.hasPrefix("sha256="), let given = Hex.decode(String(header.dropFirst(7))) else { return false }
        var message = Array("\(timestamp).".utf8)
        message += body
        return HMAC<SHA256>.isValidAuthenticationCode(given, authenticating: message, using: SymmetricKey(data: Array(secret.utf8)))
    }

    /// A new endpoint secret: 32 random bytes, as hex with a prefix that says what it is.
    public static func newSecret() -> String {
        "whsec_" + RandomToken.hex(byteCount: 32)
    }
}
