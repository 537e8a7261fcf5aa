/// The fields a JSON object Herald takes as given may have, and what each holds: the
/// Android notification (passed to the device as written), and the JPush objects Herald
/// stores before it applies them. A field JPush doesn't have, or a value of the wrong kind,
/// is an error naming the field, as for the objects Herald decodes field by field.
struct JSONFields: Sendable {
    indirect enum Kind: Sendable {
        case string(maxBytes: Int = .max)
        case int(ClosedRange<Int64>)
        case bool
        /// Any object.
        case object
        case strings
        case oneOf([String])
        case nested(JSONFields)
        case any
    }

    let kinds: [String: Kind]
    let required: [String]

    init(_ kinds: [String: Kind], required: [String] = []) {
        self.kinds = kinds
        self.required = required
    }

    /// Checks `object`, found at `path` (`notification.android`).
    func check(_ object: [String: JSONValue], at path: String) throws(HeraldError) {
        for key in object.keys.sorted() where kinds[key] == nil {
            throw UnknownFields.unknown(key, at: path, known: Array(kinds.keys))
        }
        for key in required where object[key] == nil {
            throw .invalidField("\(path).\(key)", "is required")
        }
        for (key, value) in object {
            try Self.check(value, kinds[key]!, at: "\(path).\(key)")
        }
    }

    private static func check(_ value: JSONValue, _ kind: Kind, at field: String) throws(HeraldError) {
        switch (kind, value) {
        case (.any, _), (.bool, .bool), (.object, .object):
            return
        case (.string(let maxBytes), .string(let text)):
            if text.utf8.count > maxBytes { throw .limit(field, "at most \(maxBytes) bytes") }
        case (.int(let range), .int(let number)):
            if !range.contains(number) { throw .invalidField(field, "must be \(range.lowerBound) to \(range.upperBound)") }
        case (.strings, .array(let values)):
            for (index, value) in values.enumerated() where value.string == nil {
                throw .invalidField("\(field)[\(index)]", "expected a string")
            }
        case (.oneOf(let choices), .string(let text)):
            if !choices.contains(text) { throw .invalidField(field, "must be \(choices.joined(separator: ", "))") }
        case (.nested(let fields), .object(let object)):
            try fields.check(object, at: field)
        default:
            throw .invalidField(field, "expected \(kind.expected), not \(value.kind)")
        }
    }
}

extension JSONFields.Kind {
    var expected: String {
        switch self {
        case .string, .oneOf: "a string"
        case .int: "an integer"
        case .bool: "a boolean"
        case .object, .nested: "an object"
        case .strings: "an array of strings"
        case .any: "a JSON value"
        }
    }
}

/// A JSON object whose fields Herald checks against ``JSONFields`` and keeps as written.
public protocol CheckedJSONObject: Sendable, Hashable, Codable {
    /// The fields, as the request has them.
    var fields: [String: JSONValue] { get }
    /// Checks `fields` (found at `path`) and keeps them.
    init(fields: [String: JSONValue], at path: String) throws(HeraldError)
    /// The fields the object may have; nil for any.
    static var knownFields: [String]? { get }
}

extension CheckedJSONObject {
    /// The fields the object may have; nil for any.
    public static var knownFields: [String]? { nil }

    /// Decodes and checks the object; in a JPush body (``UnknownFields``) a key the object
    /// doesn't know is dropped, and named in the answer's warnings, unless it looks like a
    /// typo of one it knows.
    public init(from decoder: any Decoder) throws {
        var fields = try decoder.singleValueContainer().decode([String: JSONValue].self)
        if let unknownFields = decoder.unknownFields, let known = Self.knownFields {
            for key in fields.keys.sorted() where !known.contains(key) {
                try unknownFields.ignore(key, at: decoder.fieldName, known: known)
                fields[key] = nil
            }
        }
        try self.init(fields: fields, at: decoder.fieldName)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(fields)
    }
}

/// An object Herald accepts with any fields (`notification.voip`, `notification.hmos`,
/// `options.third_party_channel`): only its being an object is checked.
public struct FreeJSONObject: CheckedJSONObject {
    public let fields: [String: JSONValue]

    public init(fields: [String: JSONValue], at path: String = "") {
        self.fields = fields
    }
}
