/// JPush's `callback`: where to report what became of the push. Checked and stored with
/// the message; not applied yet (the answer's `warnings` says so).
public struct PushCallback: CheckedJSONObject {
    public let fields: [String: JSONValue]

    public init(fields: [String: JSONValue], at path: String = "callback") throws(HeraldError) {
        try Self.fieldKinds.check(fields, at: path)
        if let url = fields["url"]?.string {
            let lowered = url.lowercased()
            guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://"), url.utf8.count > 8 else {
                throw .invalidField("\(path).url", "must be an http or https URL")
            }
        }
        if case .int(let type) = fields["type"], type & ~Self.typeBits != 0 || type == 0 {
            throw .invalidField("\(path).type", "must combine 1 (received), 2 (clicked) and 8 (sent)")
        }
        self.fields = fields
    }

    /// The bits of `type`: 1 received, 2 clicked, 8 sent.
    private static let typeBits: Int64 = 1 | 2 | 8

    static let fieldKinds = JSONFields(["url": .string(maxBytes: 2048), "params": .object, "type": .int(1...11)])
}
