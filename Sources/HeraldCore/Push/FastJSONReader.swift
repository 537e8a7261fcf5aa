/// The JSON reading behind ``PushRequest/fastRead(_:)``: every method returns nil (or
/// false) for what it doesn't read exactly as JSONDecoder would.
struct FastJSONReader {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    var peek: UInt8? {
        mutating get {
            skipWhitespace()
            return index < bytes.count ? bytes[index] : nil
        }
    }

    /// Nothing but whitespace left.
    var atEnd: Bool {
        mutating get { peek == nil }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard peek == byte else { return false }
        index += 1
        return true
    }

    /// An object whose keys are all in `keys`, each at most once; `value` reads the value
    /// of the key at the given position in `keys`.
    mutating func object(keys: [String], value: (inout FastJSONReader, Int) -> Bool) -> Bool {
        guard take(UInt8(ascii: "{")) else { return false }
        var seen = 0 as UInt32
        if take(UInt8(ascii: "}")) { return true }
        repeat {
            guard let key = string(), let position = keys.firstIndex(of: key), seen & (1 << position) == 0 else { return false }
            seen |= 1 << position
            guard take(UInt8(ascii: ":")), value(&self, position) else { return false }
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}"))
    }

    /// A string without escapes or control characters, in valid UTF-8.
    mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(validating: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            guard byte >= 0x20, byte != UInt8(ascii: "\\") else { return nil }
            index += 1
        }
        return nil
    }

    /// An integer written as one (no fraction, exponent or leading zero) that fits an Int.
    mutating func int() -> Int? {
        skipWhitespace()
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        let start = index
        var value = 0
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            let digit = Int(bytes[index] - UInt8(ascii: "0"))
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(digit)
            guard !overflow, !overflow2 else { return nil }
            value = sum
            index += 1
        }
        let digits = index - start
        guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
        if index < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index]) { return nil }
        return negative ? -value : value
    }

    mutating func bool() -> Bool? {
        skipWhitespace()
        for (word, value) in [("true", true), ("false", false)] where bytes[index...].starts(with: word.utf8) {
            index += word.utf8.count
            return value
        }
        return nil
    }

    mutating func strings() -> [String]? {
        guard take(UInt8(ascii: "[")) else { return nil }
        var values: [String] = []
        if take(UInt8(ascii: "]")) { return values }
        repeat {
            guard let value = string() else { return nil }
            values.append(value)
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "]")) ? values : nil
    }

    /// Any JSON value as ``JSONValue`` decodes it, but null, numbers that aren't plain
    /// integers, and values nested deeper than ``maxDepth``: JSONDecoder gets those.
    mutating func value(depth: Int = 0) -> JSONValue? {
        guard depth < Self.maxDepth, let next = peek else { return nil }
        switch next {
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "{"): return objectValue(depth: depth + 1).map(JSONValue.object)
        case UInt8(ascii: "["): return arrayValue(depth: depth + 1).map(JSONValue.array)
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return bool().map(JSONValue.bool)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return int().map { .int(Int64($0)) }
        default: return nil
        }
    }

    /// An object of JSON values, each key once.
    mutating func objectValue(depth: Int = 1) -> [String: JSONValue]? {
        guard take(UInt8(ascii: "{")) else { return nil }
        var fields: [String: JSONValue] = [:]
        if take(UInt8(ascii: "}")) { return fields }
        repeat {
            guard let key = string(), fields[key] == nil, take(UInt8(ascii: ":")), let value = value(depth: depth) else { return nil }
            fields[key] = value
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}")) ? fields : nil
    }

    private mutating func arrayValue(depth: Int) -> [JSONValue]? {
        guard take(UInt8(ascii: "[")) else { return nil }
        var values: [JSONValue] = []
        if take(UInt8(ascii: "]")) { return values }
        repeat {
            guard let value = value(depth: depth) else { return nil }
            values.append(value)
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "]")) ? values : nil
    }

    /// Values nested deeper are left to JSONDecoder (which has its own limit): reading
    /// them here would recurse as deep as the body nests.
    static let maxDepth = 16
}
