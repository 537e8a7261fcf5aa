import Foundation

/// The one rule for text Herald takes from a request: no U+0000 (NUL) anywhere.
///
/// PostgreSQL stores no NUL, in `text` (SQLSTATE 22021) nor in `jsonb` (22P05), and
/// Herald keeps what it is given in both, so a NUL reaching a statement failed the request
/// with a 500 after part of it may have run. JSON can carry one only as the escape
/// `\u0000`, and a URI only as `%00`: the API refuses both before reading any field, with
/// `400` code `1003` naming where the NUL is, whatever the route.
public enum StoredText {
    /// Refuses a JSON body that has a NUL in a string or a key, naming the field.
    public static func checkNoNUL(_ body: some Collection<UInt8>) throws(HeraldError) {
        guard mayHoldNUL(body) else { return }
        // Rare: only now is the body read whole, to name the field.
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(body)) else { return }
        if let path = nulPath(in: value, at: "") {
            throw .invalidField(path.isEmpty ? "body" : path, "must not contain U+0000 (NUL)")
        }
    }

    /// Refuses a request target (path and query, percent-encoded) with a `%00`, naming
    /// the query parameter or the path.
    public static func checkNoNUL(target: String) throws(HeraldError) {
        guard containsEncodedNUL(target.utf8) else { return }
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        if parts[0].contains("%00") { throw .invalidField("path", "must not contain U+0000 (NUL, %00)") }
        for pair in parts.count > 1 ? parts[1].split(separator: "&") : [] where pair.contains("%00") {
            let name = pair.split(separator: "=", maxSplits: 1).first.map { $0.removingPercentEncoding ?? String($0) } ?? ""
            let shown = name.contains("\u{0}") || name.isEmpty ? "query" : name
            throw .invalidField(shown, "must not contain U+0000 (NUL, %00)")
        }
    }

    private static func containsEncodedNUL(_ bytes: String.UTF8View) -> Bool {
        var zeros = -1
        for byte in bytes {
            if byte == UInt8(ascii: "%") {
                zeros = 0
            } else if byte == UInt8(ascii: "0"), zeros >= 0 {
                zeros += 1
                if zeros == 2 { return true }
            } else {
                zeros = -1
            }
        }
        return false
    }

    /// Whether the bytes have `\u0000` at all (JSON writes the escape's `u` in lower case
    /// only); an escaped backslash before it (`\\u0000`) is ruled out by the full read.
    static func mayHoldNUL(_ body: some Collection<UInt8>) -> Bool {
        let pattern: [UInt8] = Array(#"\u0000"#.utf8)
        var matched = 0
        for byte in body {
            if byte == pattern[matched] {
                matched += 1
                if matched == pattern.count { return true }
            } else {
                matched = byte == pattern[0] ? 1 : 0
            }
        }
        return false
    }

    /// The path of the first string or key holding a NUL, as operators write fields.
    static func nulPath(in value: JSONValue, at path: String) -> String? {
        switch value {
        case .string(let text):
            return text.utf8.contains(0) ? path : nil
        case .array(let values):
            for (index, element) in values.enumerated() {
                if let found = nulPath(in: element, at: "\(path)[\(index)]") { return found }
            }
            return nil
        case .object(let fields):
            for (key, element) in fields.sorted(by: { $0.key < $1.key }) {
                let field = path.isEmpty ? key : "\(path).\(key)"
                if key.utf8.contains(0) { return path.isEmpty ? "body" : path }
                if let found = nulPath(in: element, at: field) { return found }
            }
            return nil
        default:
            return nil
        }
    }
}
