/// A key of any name, to see which keys an object really has.
public struct AnyCodingKey: CodingKey, Sendable {
    public var stringValue: String
    public var intValue: Int?

    public init(stringValue: String) { self.stringValue = stringValue }

    public init?(intValue: Int) {
        self.stringValue = "\(intValue)"
        self.intValue = intValue
    }
}

/// Coding paths written the way operators write fields: `audience.tag[2]`.
public enum CodingPath {
    public static func describe(_ codingPath: [any CodingKey]) -> String {
        var result = ""
        for key in codingPath {
            if let index = key.intValue {
                result += "[\(index)]"
            } else {
                result += result.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return result.isEmpty ? "body" : result
    }
}

extension Decoder {
    /// Rejects keys the request type doesn't know, so a typo (`"tag"` for `"tags"`) is an
    /// error instead of a silently ignored field.
    public func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(_ keys: Keys.Type) throws {
        let container = try container(keyedBy: AnyCodingKey.self)
        if let unknown = container.allKeys.first(where: { Keys(stringValue: $0.stringValue) == nil }) {
            let field = CodingPath.describe(codingPath + [unknown])
            let known = Keys.allCases.map(\.stringValue).sorted()
            throw HeraldError(.invalidJSON, "\(field): unknown field (expected one of \(known.joined(separator: ", ")))")
        }
    }

    /// The field this decoder reads, as operators write it.
    public var fieldName: String { CodingPath.describe(codingPath) }
}
