/// JPush's `callback`: where to report what became of the push's copies. Herald POSTs one
/// request per event the `type` bits ask for (1 received: acknowledged over the MQTT
/// connection; 2 clicked: opened; 8 sent: sent over MQTT or to APNs), echoing `params`
/// (docs/webhooks.md). JPush falls back to a URL set in its console without `url`; Herald
/// has no console, so `url` is required.
public struct PushCallback: CheckedJSONObject {
    public let fields: [String: JSONValue]

    public init(fields: [String: JSONValue], at path: String = "callback") throws(HeraldError) {
        try Self.fieldKinds.check(fields, at: path)
        guard let url = fields["url"]?.string else {
            throw .invalidField("\(path).url", "is required: Herald has no default callback URL")
        }
        guard Self.isHTTPURL(url) else {
            throw .invalidField("\(path).url", "must be an http or https URL with a host")
        }
        if case .int(let type) = fields["type"], type & ~Self.typeBits != 0 || type == 0 {
            throw .invalidField("\(path).type", "must combine 1 (received), 2 (clicked) and 8 (sent)")
        }
        self.fields = fields
    }

    /// Where the requests go.
    public var url: String { fields["url"]?.string ?? "" }
    /// The events asked for: 1 received, 2 clicked, 8 sent; all three when not given.
    public var type: Int64 {
        if case .int(let type) = fields["type"] { return type }
        return Self.typeBits
    }

    /// What the store keeps of it: `{"url", "params", "type"}`.
    public var storedJSON: String {
        var object: [String: JSONValue] = ["url": .string(url), "type": .int(type)]
        if let params = fields["params"] { object["params"] = params }
        return String(decoding: JSONValue.object(object).bytes, as: UTF8.self)
    }

    /// The bits of `type`: 1 received, 2 clicked, 8 sent.
    private static let typeBits: Int64 = 1 | 2 | 8

    /// Whether `url` is an absolute http or https URL with a host (JPush's rule; checked
    /// again, with the address, when a request is made).
    public static func isHTTPURL(_ url: String) -> Bool {
        let lowered = url.lowercased()
        let rest: Substring
        if lowered.hasPrefix("http://") {
            rest = lowered.dropFirst(7)
        } else if lowered.hasPrefix("https://") {
            rest = lowered.dropFirst(8)
        } else {
            return false
        }
        let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        // No control characters (PostgreSQL refuses NUL in text) nor line breaks anywhere.
        let clean = !url.unicodeScalars.contains { scalar in
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}"
        }
        return clean && !host.isEmpty && !host.contains(where: { $0 == " " || $0 == "@" })
    }

    public static var knownFields: [String]? { Array(fieldKinds.kinds.keys) }

    static let fieldKinds = JSONFields(["url": .string(maxBytes: 2048), "params": .object, "type": .int(1...11)])
}
