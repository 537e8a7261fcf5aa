import Crypto
import Foundation
import HeraldCore

/// An app's SMS provider over HTTP (``SMSHTTPProviderConfiguration``): one signed POST per
/// SMS through the node's `OutboundClient` (addresses checked, no redirect followed), ended by
/// the configuration's deadline. Retries are the outbox's (bounded attempts with backoff),
/// so a provider that is down delays SMS instead of holding the sender.
struct HTTPSMSProvider: SMSProvider {
    let configuration: SMSHTTPProviderConfiguration
    let client: any OutboundPosting

    func send(_ sms: SMSRequest) async -> SMSOutcome {
        let body = Array(Self.body(configuration.bodyTemplate, sms).utf8)
        let timestamp = String(Int(Date().timeIntervalSince1970))
        let headers: [(name: String, value: String)] = [
            ("Content-Type", "application/json"),
            ("X-Herald-Timestamp", timestamp),
            ("Idempotency-Key", sms.idempotencyKey),
            (configuration.signatureHeader, "sha256=" + Self.signature(secret: configuration.secret, timestamp: timestamp, body: body)),
        ]
        let answer = await client.post(configuration.url, headers: headers, body: body, timeout: .seconds(configuration.timeoutSeconds))
        switch answer {
        case .answered(let status, _) where (200..<300).contains(status):
            return .sent
        // A redirect is not followed, and may be fixed on the provider's side: tried again.
        case .answered(let status, _) where status == 429 || (300..<400).contains(status) || (500..<600).contains(status):
            return .retryLater(reason: "HTTP \(status)")
        case .answered(let status, _):
            return .rejected(reason: "HTTP \(status)")
        case .failed(let reason):
            return .retryLater(reason: reason.hasPrefix("address refused") ? "ProviderAddressRefused" : "ProviderUnreachable")
        }
    }

    /// `sha256=` + this: hex HMAC-SHA256 under the secret of `<timestamp>.<body>`.
    static func signature(secret: String, timestamp: String, body: [UInt8]) -> String {
        var message = Array(timestamp.utf8)
        message.append(UInt8(ascii: "."))
        message += body
        let code = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Array(secret.utf8)))
        return code.map { String(format: "%02x", $0) }.joined()
    }

    /// The template with the SMS's values, each as JSON.
    static func body(_ template: String, _ sms: SMSRequest) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        func json(_ value: JSONValue?) -> String {
            guard let value, let data = try? encoder.encode(value) else { return "null" }
            return String(decoding: data, as: UTF8.self)
        }
        return SMSHTTPProviderConfiguration.fill(
            template,
            with: [
                "mobile": json(.string(sms.mobile)),
                "content": json(sms.content.map(JSONValue.string)),
                "template_id": json(sms.templateID.map(JSONValue.int)),
                "params": json(sms.params.map(JSONValue.object)),
                "sign_id": json(sms.signID.map(JSONValue.int)),
                "msg_id": json(.string(sms.msgID)),
                "idempotency_key": json(.string(sms.idempotencyKey)),
            ]
        )
    }
}
