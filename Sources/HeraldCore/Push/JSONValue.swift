/// Any JSON value, for the parts of a push Herald passes on as given: extras (JPush's own
/// example is `{"news_id": 134}`), `notification.voip`, the Android notification, and the
/// fields Herald stores without applying them yet.
///
/// Numbers written as integers that fit 64 bits stay integers; any other number is a
/// double. Objects are written with sorted keys, so a rendering is the same every time.
public enum JSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        // Strings and numbers are what extras mostly hold: they are asked for first (asking a
        // decoder for the wrong kind of value costs it an error to build and throw).
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if container.decodeNil() {
            self = .null
        } else if let number = try? container.decode(Int64.self) {
            self = .int(number)
        } else if let number = try? container.decode(Double.self) {
            self = .double(number)
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let object = try? decoder.container(keyedBy: AnyCodingKey.self) {
            var fields: [String: JSONValue] = [:]
            fields.reserveCapacity(object.allKeys.count)
            for key in object.allKeys { fields[key.stringValue] = try object.decode(JSONValue.self, forKey: key) }
            self = .object(fields)
        } else if var array = try? decoder.unkeyedContainer() {
            var values: [JSONValue] = []
            while !array.isAtEnd { values.append(try array.decode(JSONValue.self)) }
            self = .array(values)
        } else {
            throw HeraldError.invalidField(decoder.fieldName, "expected a JSON value")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .int(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .double(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .array(let values):
            var container = encoder.unkeyedContainer()
            for value in values { try container.encode(value) }
        case .object(let fields):
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            for (key, value) in fields { try container.encode(value, forKey: AnyCodingKey(stringValue: key)) }
        }
    }

    /// What kind of value this is, as an error message says it.
    public var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    public var string: String? {
        if case .string(let value) = self { value } else { nil }
    }

    public var object: [String: JSONValue]? {
        if case .object(let value) = self { value } else { nil }
    }

    /// The value written as compact JSON, objects with sorted keys.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        write(to: &out)
        return out
    }

    func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value): out.append(contentsOf: String(value).utf8)
        case .double(let value): out.append(contentsOf: Self.text(value).utf8)
        case .string(let value): RenderedJSON.write(value, to: &out)
        case .array(let values):
            out.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                value.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let fields):
            Self.write(fields, to: &out)
        }
    }

    static func write(_ fields: [String: JSONValue], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        for (index, key) in fields.keys.sorted().enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            RenderedJSON.write(key, to: &out)
            out.append(UInt8(ascii: ":"))
            fields[key]!.write(to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// A double as JSON has it: Swift's shortest round-tripping form (`0.5`, `1e+20`).
    /// JSON has no infinities or NaN, so a parsed value never is one.
    private static func text(_ value: Double) -> String {
        value.isFinite ? "\(value)" : "null"
    }

    /// A bound on the bytes the value takes when written, whatever its strings hold (every
    /// string byte escaped takes at most 6).
    var renderedSizeBound: Int {
        switch self {
        case .null, .bool: 5
        case .int, .double: 32
        case .string(let value): value.utf8.count * 6 + 2
        case .array(let values): values.reduce(2) { $0 + $1.renderedSizeBound + 1 }
        case .object(let fields): Self.renderedSizeBound(fields)
        }
    }

    static func renderedSizeBound(_ fields: [String: JSONValue]) -> Int {
        fields.reduce(2) { $0 + $1.key.utf8.count * 6 + 4 + $1.value.renderedSizeBound }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
