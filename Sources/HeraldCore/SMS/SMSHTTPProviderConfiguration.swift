import Foundation

/// An app's SMS provider reached over HTTP: Herald POSTs `bodyTemplate` with its
/// placeholders filled in to `url`, signed with HMAC-SHA256 under `secret`.
///
/// Placeholders stand for JSON values and are written bare in the template:
/// `{{mobile}}`, `{{content}}`, `{{template_id}}`, `{{params}}`, `{{sign_id}}`,
/// `{{msg_id}}`, `{{idempotency_key}}` (null when the push has none), e.g.
/// `{"to": {{mobile}}, "text": {{content}}, "ref": {{idempotency_key}}}`.
///
/// The request carries `X-Herald-Timestamp` (epoch seconds), `Idempotency-Key`, and
/// ``signatureHeader`` = `sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`. A 2xx
/// answer is sent; another 4xx than 429 refused for good; 429, 5xx and timeouts are tried
/// again later (the outbox's bounded attempts).
public struct SMSHTTPProviderConfiguration: Sendable, Hashable, Codable {
    public var url: String
    public var bodyTemplate: String
    public var secret: String
    public var signatureHeader: String
    public var timeoutSeconds: Int

    enum CodingKeys: String, CodingKey, CaseIterable {
        case url, secret
        case bodyTemplate = "body_template"
        case signatureHeader = "signature_header"
        case timeoutSeconds = "timeout_seconds"
    }

    public static let placeholders = ["mobile", "content", "template_id", "params", "sign_id", "msg_id", "idempotency_key"]

    public init(url: String, bodyTemplate: String, secret: String, signatureHeader: String = "X-Herald-Signature", timeoutSeconds: Int = 10) {
        self.url = url
        self.bodyTemplate = bodyTemplate
        self.secret = secret
        self.signatureHeader = signatureHeader
        self.timeoutSeconds = timeoutSeconds
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        url = try container.decode(String.self, forKey: .url)
        bodyTemplate = try container.decode(String.self, forKey: .bodyTemplate)
        secret = try container.decode(String.self, forKey: .secret)
        signatureHeader = try container.decodeIfPresent(String.self, forKey: .signatureHeader) ?? "X-Herald-Signature"
        timeoutSeconds = try container.decodeIfPresent(Int.self, forKey: .timeoutSeconds) ?? 10
    }

    /// `http://` or `https://` (any case), a host name or IPv4 address, an optional port,
    /// then an optional path, query and fragment of RFC 3986's characters (others
    /// percent-encoded), at most 2048 bytes: the pattern openapi.yaml states for
    /// `SMSProviderRequest.url`.
    static let urlPattern =
        "^[hH][tT][tT][pP][sS]?://[-A-Za-z0-9._~]+(:[0-9]{1,5})?"
        + "(/([-A-Za-z0-9._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2}|/)*)?"
        + "(\\?([-A-Za-z0-9._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2}|[/?])*)?"
        + "(#([-A-Za-z0-9._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2}|[/?])*)?$"

    static func isPlainHTTPURL(_ url: String) -> Bool {
        guard url.utf8.count <= 2048, let regex = try? Regex(urlPattern) else { return false }
        return (try? regex.wholeMatch(in: url)) != nil
    }

    /// Checks the values: an http(s) URL, a template that is JSON once its placeholders are
    /// filled, a secret of at least 16 bytes, a header name, a timeout of 1 to 60 seconds.
    public func validated() throws(HeraldError) -> Self {
        guard Self.isPlainHTTPURL(url), URL(string: url) != nil else {
            throw .invalidField(
                "url",
                "must be an http or https URL: a host name or IPv4 address, an optional port, and RFC 3986's characters (others percent-encoded), at most 2048 bytes"
            )
        }
        let filled = Self.fill(bodyTemplate, with: Dictionary(uniqueKeysWithValues: Self.placeholders.map { ($0, "null") }))
        guard (try? JSONSerialization.jsonObject(with: Data(filled.utf8))) != nil else {
            throw .invalidField("body_template", "must be JSON once its placeholders are filled in (write them bare: {\"to\": {{mobile}}})")
        }
        if secret.utf8.count < 16 { throw .invalidField("secret", "must be at least 16 bytes") }
        if signatureHeader.isEmpty || !signatureHeader.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) {
            throw .invalidField("signature_header", "must be a header name (letters, digits, -)")
        }
        guard (1...60).contains(timeoutSeconds) else { throw .invalidField("timeout_seconds", "must be 1 to 60") }
        return self
    }

    /// The URL for logs: its query and fragment, which often carry the provider's key
    /// (`?apikey=`), replaced by `?…`.
    public var redactedURL: String {
        guard let cut = url.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return url }
        return url[..<cut] + "?…"
    }

    /// The template with each `{{name}}` replaced by `values[name]` (JSON text).
    public static func fill(_ template: String, with values: [String: String]) -> String {
        var result = template
        for (name, value) in values { result = result.replacingOccurrences(of: "{{\(name)}}", with: value) }
        return result
    }
}
