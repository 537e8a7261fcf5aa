/// JPush's `sms_message`: an SMS to the device's bound mobile number when the push hasn't
/// reached the device (acknowledged over the connection, or taken by APNs) within
/// `delay_time` seconds (``SMSFallback``). Kept as given, for the stored request.
///
/// The text is Herald's `content`, or JPush's template: `temp_id` with `temp_para` (and
/// `signid`), which the app's SMS provider fills in.
public struct SMSMessage: CheckedJSONObject {
    public let fields: [String: JSONValue]

    public init(fields: [String: JSONValue], at path: String = "sms_message") throws(HeraldError) {
        try Self.fieldKinds.check(fields, at: path)
        if fields["content"] == nil && fields["temp_id"] == nil {
            throw .missingField("\(path).content", "an SMS needs content, or temp_id (a template of the SMS provider)")
        }
        if fields["content"] != nil && fields["temp_id"] != nil {
            throw .invalidField("\(path).content", "give content or temp_id, not both")
        }
        if fields["content"]?.string?.isEmpty == true { throw .invalidField("\(path).content", "must not be empty") }
        self.fields = fields
    }

    public static var knownFields: [String]? { Array(fieldKinds.kinds.keys) }

    static let fieldKinds = JSONFields(
        [
            "delay_time": .int(0...86_400),
            "content": .string(maxBytes: SMSFallback.maxContentBytes),
            "signid": .int(0...Int64.max),
            "temp_id": .int(1...Int64.max),
            "temp_para": .object,
            "active_filter": .bool,
        ],
        required: ["delay_time"]
    )

    /// The typed fallback, once the fields are checked.
    public var fallback: SMSFallback {
        func int(_ key: String) -> Int64? {
            if case .int(let value) = fields[key] { return value }
            return nil
        }
        var params: [String: JSONValue]?
        if case .object(let value) = fields["temp_para"] { params = value }
        return SMSFallback(
            delay: Int(int("delay_time") ?? 0),
            content: fields["content"]?.string,
            templateID: int("temp_id"),
            params: params,
            signID: int("signid")
        )
    }
}

/// A validated `sms_message`: one SMS per device the push hasn't reached within ``delay``
/// seconds, sent through the app's SMS provider.
public struct SMSFallback: Sendable, Hashable {
    /// Seconds after the push was accepted; 0: as soon as its copies have an outcome.
    public var delay: Int
    public var content: String?
    public var templateID: Int64?
    public var params: [String: JSONValue]?
    public var signID: Int64?

    public init(delay: Int, content: String?, templateID: Int64?, params: [String: JSONValue]?, signID: Int64?) {
        self.delay = delay
        self.content = content
        self.templateID = templateID
        self.params = params
        self.signID = signID
    }

    /// Bytes of `content` (about ten SMS segments of Chinese text).
    public static let maxContentBytes = 1024
}
