import HeraldCore

/// One SMS for a provider to send.
public struct SMSRequest: Sendable, Hashable {
    public var appID: Int64
    /// E.164, e.g. `+8613800138000`. Never logged in full (``maskedMobile``).
    public var mobile: String
    /// The text, when the push gave `content`.
    public var content: String?
    /// JPush's template: `temp_id`, `temp_para`, `signid`.
    public var templateID: Int64?
    public var params: [String: JSONValue]?
    public var signID: Int64?
    /// The same for every attempt of one SMS (message and device): a provider that
    /// deduplicates on it never sends one twice.
    public var idempotencyKey: String
    public var msgID: String

    public init(
        appID: Int64,
        mobile: String,
        content: String?,
        templateID: Int64? = nil,
        params: [String: JSONValue]? = nil,
        signID: Int64? = nil,
        idempotencyKey: String,
        msgID: String
    ) {
        self.appID = appID
        self.mobile = mobile
        self.content = content
        self.templateID = templateID
        self.params = params
        self.signID = signID
        self.idempotencyKey = idempotencyKey
        self.msgID = msgID
    }

    /// The number for logs: the country code and last four digits only.
    public var maskedMobile: String { SMSRequest.mask(mobile) }

    public static func mask(_ mobile: String) -> String {
        guard mobile.count > 7 else { return String(repeating: "*", count: mobile.count) }
        return String(mobile.prefix(3)) + String(repeating: "*", count: mobile.count - 7) + String(mobile.suffix(4))
    }
}

/// What a provider answered.
public enum SMSOutcome: Sendable, Hashable {
    case sent
    /// Refused for good (a bad number, an unknown template): not tried again.
    case rejected(reason: String)
    /// A failure that may pass (a timeout, a 5xx, a rate limit): tried again later.
    case retryLater(reason: String)
}

/// Sends SMS for the message center: the built-in ``SMSSandbox``, or an app's HTTP provider.
public protocol SMSProvider: Sendable {
    func send(_ sms: SMSRequest) async -> SMSOutcome
}
