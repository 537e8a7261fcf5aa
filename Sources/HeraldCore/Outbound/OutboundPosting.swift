/// Sends Herald's requests to the addresses operators name: webhooks, JPush callbacks, apps'
/// SMS providers. Whatever sends them keeps ``OutboundAddressRule`` on every address it
/// connects to, follows no redirect and holds each request to its deadline. The center's
/// `OutboundClient` is the one implementation; the API is given it for a webhook's test
/// request.
public protocol OutboundPosting: Sendable {
    /// POSTs `body` to `url` with `headers`; the answer, or why there is none, within `timeout`.
    func post(_ url: String, headers: [(name: String, value: String)], body: [UInt8], timeout: Duration) async -> OutboundAnswer
}

/// What became of an outbound request.
public enum OutboundAnswer: Sendable, Hashable {
    /// The receiver answered `status` (a redirect is an answer like any other: not followed),
    /// with the start of its body.
    case answered(status: Int, body: String)
    /// No answer: refused by the address rule, unreachable, timed out. `reason` is short and
    /// label-safe.
    case failed(reason: String)

    /// The status when the receiver answered.
    public var status: Int? {
        if case .answered(let status, _) = self { status } else { nil }
    }

    /// Whether the receiver took it (a 2xx).
    public var isAccepted: Bool { status.map { (200..<300).contains($0) } ?? false }

    /// A short description of a failure: `HTTP 500: <body>`, `HTTP 302: redirects are not
    /// followed`, or the reason there was no answer; nil for a 2xx.
    public var failure: String? {
        switch self {
        case .answered(let status, _) where (200..<300).contains(status): nil
        case .answered(let status, _) where (300..<400).contains(status): "HTTP \(status): redirects are not followed"
        case .answered(let status, let body): "HTTP \(status)" + (body.isEmpty ? "" : ": " + String(body.prefix(200)))
        case .failed(let reason): reason
        }
    }
}
