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
    /// The object this decoder reads, refusing keys `Keys` doesn't name, so a typo
    /// (`"tag"` for `"tags"`) is an error instead of a silently ignored field. The object's
    /// keys are read once: decoders such as JSONDecoder index an object for every
    /// container asked of them.
    public func strictContainer<Keys: CodingKey & CaseIterable>(keyedBy keys: Keys.Type) throws -> StrictKeyedContainer<Keys> {
        try StrictKeyedContainer(checking: container(keyedBy: AnyCodingKey.self), at: codingPath, unknownFields: unknownFields)
    }

    /// The field this decoder reads, as operators write it.
    public var fieldName: String { CodingPath.describe(codingPath) }
}

/// An object's fields by `Keys`, every key of the object known (``Decoder/strictContainer(keyedBy:)``).
public struct StrictKeyedContainer<Keys: CodingKey> {
    let container: KeyedDecodingContainer<AnyCodingKey>

    /// `object`, once every key it has is one of `Keys`, or is ignored by `unknownFields`
    /// (a JPush body's decoder has one: ``UnknownFields``).
    public init(
        checking object: KeyedDecodingContainer<AnyCodingKey>,
        at codingPath: [any CodingKey],
        unknownFields: UnknownFields? = nil
    ) throws where Keys: CaseIterable {
        let known = Keys.allCases.map(\.stringValue)
        let path = CodingPath.describe(codingPath)
        for key in object.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) where Keys(stringValue: key.stringValue) == nil {
            guard let unknownFields else { throw UnknownFields.unknown(key.stringValue, at: path, known: known) }
            try unknownFields.ignore(key.stringValue, at: path, known: known)
        }
        container = object
    }

    public func contains(_ key: Keys) -> Bool {
        container.contains(AnyCodingKey(key))
    }

    public func decode<Value: Decodable>(_ type: Value.Type, forKey key: Keys) throws -> Value {
        try container.decode(type, forKey: AnyCodingKey(key))
    }

    public func decodeIfPresent<Value: Decodable>(_ type: Value.Type, forKey key: Keys) throws -> Value? {
        try container.decodeIfPresent(type, forKey: AnyCodingKey(key))
    }

    /// The field's value, nil when the object hasn't the field; an explicit `null` is
    /// refused (`400` code `1003`) rather than read as absent, so the request means what it
    /// says. (Fields where `null` means something, such as "clear", use
    /// ``decodeIfPresent(_:forKey:)``.)
    public func decodeIfGiven<Value: Decodable>(_ type: Value.Type, forKey key: Keys) throws -> Value? {
        let anyKey = AnyCodingKey(key)
        guard container.contains(anyKey) else { return nil }
        if try container.decodeNil(forKey: anyKey) {
            let field = CodingPath.describe(container.codingPath + [anyKey])
            throw HeraldError.invalidField(field, "must not be null (leave the field out)")
        }
        return try container.decode(type, forKey: anyKey)
    }

    public func decodeNil(forKey key: Keys) throws -> Bool {
        try container.decodeNil(forKey: AnyCodingKey(key))
    }
}

extension AnyCodingKey {
    init(_ key: some CodingKey) {
        stringValue = key.stringValue
        intValue = key.intValue
    }
}
