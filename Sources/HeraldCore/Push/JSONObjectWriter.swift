/// Writes one JSON object field by field, straight into bytes, in the order the fields are
/// given; absent (nil) fields are left out. For what is written on every push, where
/// JSONEncoder's generic machinery cost more than the rest of the work.
public struct JSONObjectWriter {
    private(set) var bytes: [UInt8]
    private var empty = true

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    /// The object, closed.
    public mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    public mutating func field(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        RenderedJSON.write(value, to: &bytes)
    }

    public mutating func field(_ name: String, _ value: Int?) {
        guard let value else { return }
        key(name)
        bytes.append(contentsOf: String(value).utf8)
    }

    public mutating func field(_ name: String, _ value: Bool?) {
        guard let value else { return }
        key(name)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    public mutating func field(_ name: String, _ values: [String]?) {
        guard let values else { return }
        key(name)
        RenderedJSON.strings(values).write(to: &bytes)
    }

    public mutating func field(_ name: String, _ value: JSONValue?) {
        guard let value else { return }
        key(name)
        value.write(to: &bytes)
    }

    /// An object of JSON values, with sorted keys.
    public mutating func field(_ name: String, _ fields: [String: JSONValue]?) {
        guard let fields else { return }
        key(name)
        JSONValue.write(fields, to: &bytes)
    }

    /// A nested object, written by `body`.
    public mutating func object(_ name: String, _ body: (inout JSONObjectWriter) -> Void) {
        key(name)
        var nested = JSONObjectWriter(capacity: 0)
        body(&nested)
        bytes.append(contentsOf: nested.finish())
    }

    private mutating func key(_ name: String) {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        RenderedJSON.write(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }
}
