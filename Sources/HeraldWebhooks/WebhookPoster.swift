import Foundation
import HeraldCore

/// POSTs JSON to webhook and callback receivers through the ``OutboundClient`` (addresses
/// checked, no redirect followed), each request bounded by `timeout`.
struct WebhookPoster: Sendable {
    /// What a receiver answered.
    enum Result: Sendable, Equatable {
        /// A 2xx.
        case accepted(status: Int)
        /// Another status (a redirect among them), or no answer (`status` nil, `error` says why).
        case refused(status: Int?, error: String)

        var status: Int? {
            switch self {
            case .accepted(let status): status
            case .refused(let status, _): status
            }
        }
    }

    let client: any OutboundPosting
    let timeout: Duration

    /// POSTs `body`; `secret`, when given, signs it (``WebhookSignature``).
    func post(_ url: String, body: [UInt8], secret: String?, userAgent: String = "Herald-Webhooks/1") async -> Result {
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json"), ("User-Agent", userAgent)]
        if let secret {
            let timestamp = Int64(Date().timeIntervalSince1970)
            headers.append((WebhookSignature.timestampHeader, String(timestamp)))
            headers.append((WebhookSignature.signatureHeader, WebhookSignature.header(secret: secret, timestamp: timestamp, body: body)))
        }
        let answer = await client.post(url, headers: headers, body: body, timeout: timeout)
        if let failure = answer.failure { return .refused(status: answer.status, error: failure) }
        return .accepted(status: answer.status ?? 200)
    }
}
