import AsyncHTTPClient
import Foundation
import HeraldCore
import NIOCore
import NIOHTTP1

/// POSTs JSON to webhook and callback receivers over HTTP/1.1 with keep-alive (the shared
/// AsyncHTTPClient, which pools connections per host), each request bounded by `timeout`.
struct WebhookPoster: Sendable {
    /// What a receiver answered.
    enum Result: Sendable, Equatable {
        /// A 2xx.
        case accepted(status: Int)
        /// Another status, or no answer (`status` nil, `error` says why).
        case refused(status: Int?, error: String)

        var status: Int? {
            switch self {
            case .accepted(let status): status
            case .refused(let status, _): status
            }
        }
    }

    var client: HTTPClient = .shared
    let timeout: Duration

    /// POSTs `body`; `secret`, when given, signs it (``WebhookSignature``).
    func post(_ url: String, body: [UInt8], secret: String?, userAgent: String = "Herald-Webhooks/1") async -> Result {
        guard PushCallback.isHTTPURL(url) else { return .refused(status: nil, error: "not an http or https URL") }
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: userAgent)
        if let secret {
            let timestamp = Int64(Date().timeIntervalSince1970)
            request.headers.add(name: WebhookSignature.timestampHeader, value: String(timestamp))
            request.headers.add(
                name: WebhookSignature.signatureHeader,
                value: WebhookSignature.header(secret: secret, timestamp: timestamp, body: body)
            )
        }
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await client.execute(
                request,
                timeout: .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
            )
            // The answer's body is read (a little of it) so the connection can be reused.
            let text = (try? await response.body.collect(upTo: 4096)).map { String(buffer: $0) } ?? ""
            let status = Int(response.status.code)
            guard (200..<300).contains(status) else {
                return .refused(status: status, error: "HTTP \(status)" + (text.isEmpty ? "" : ": " + String(text.prefix(200))))
            }
            return .accepted(status: status)
        } catch {
            return .refused(status: nil, error: Self.describe(error))
        }
    }

    /// A short, label-safe description of a transport error.
    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError { return "\(error)" }
        return String(describing: error).prefix(200).description
    }
}
