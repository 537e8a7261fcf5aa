import Crypto
import Foundation
import HeraldCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An app's SMS provider over HTTP (``SMSHTTPProviderConfiguration``): one signed POST per
/// SMS, with the configuration's deadline. Retries are the outbox's (bounded attempts with
/// backoff), so a provider that is down delays SMS instead of holding the sender.
struct HTTPSMSProvider: SMSProvider {
    let configuration: SMSHTTPProviderConfiguration

    func send(_ sms: SMSRequest) async -> SMSOutcome {
        guard let url = URL(string: configuration.url) else { return .rejected(reason: "BadProviderURL") }
        let body = Array(Self.body(configuration.bodyTemplate, sms).utf8)
        let timestamp = String(Int(Date().timeIntervalSince1970))
        var request = URLRequest(url: url, timeoutInterval: TimeInterval(configuration.timeoutSeconds))
        request.httpMethod = "POST"
        request.httpBody = Data(body)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(timestamp, forHTTPHeaderField: "X-Herald-Timestamp")
        request.setValue(sms.idempotencyKey, forHTTPHeaderField: "Idempotency-Key")
        request.setValue(
            "sha256=" + Self.signature(secret: configuration.secret, timestamp: timestamp, body: body),
            forHTTPHeaderField: configuration.signatureHeader
        )
        do {
            let (_, response) = try await URLSession.shared.data(for: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            switch status {
            case 200..<300: return .sent
            case 429, 500..<600: return .retryLater(reason: "HTTP \(status)")
            default: return .rejected(reason: "HTTP \(status)")
            }
        } catch {
            return .retryLater(reason: "ProviderUnreachable")
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
