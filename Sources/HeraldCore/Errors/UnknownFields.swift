import Foundation

/// What becomes of a key an object doesn't know, in the bodies JPush's clients send.
///
/// JPush's clients write fields newer than Herald's knowledge (the Java client's
/// `notification.ai_opportunity`, the PHP and Go clients' `winphone`): refusing them would
/// refuse every push such a client sends, where JPush accepts them. So, where a decoder
/// carries an ``UnknownFields`` collector (the push, batch push and schedule bodies), a key
/// that looks like no field the object has is accepted, ignored and named in the answer's
/// `warnings`; a key that looks like a typo of one the object has (`notifcation`,
/// `thread_id` for `thread-id`) is still refused (`400`, code `1009`), naming the field it
/// resembles. Anywhere else every unknown key is refused, as Herald's own objects have no
/// older clients to spare.
public final class UnknownFields: @unchecked Sendable {
    private let lock = NSLock()
    private var ignored: [String] = []

    public init() {}

    /// The key under `userInfo` of a decoder that collects ignored keys.
    public static let userInfoKey = CodingUserInfoKey(rawValue: "herald.unknownFields")!

    /// The warnings for the keys ignored so far, in the order they were met.
    public var warnings: [String] {
        lock.withLock { ignored }
    }

    /// Decides `key`, unknown at `path` where `known` are the object's fields: returns
    /// normally when the key is ignored (and named in ``warnings``), throws when it is
    /// refused.
    func ignore(_ key: String, at path: String, known: [String]) throws(HeraldError) {
        if let meant = Self.resembled(key, among: known) {
            throw Self.unknown(key, at: path, known: known, meant: meant)
        }
        let warning = "\(Self.field(key, at: path)): not a field Herald knows; ignored"
        lock.withLock {
            if !ignored.contains(warning) { ignored.append(warning) }
        }
    }

    /// The error for `key`, unknown at `path`.
    static func unknown(_ key: String, at path: String, known: [String], meant: String? = nil) -> HeraldError {
        let hint = meant.map { " (did you mean \($0)?)" } ?? " (expected one of \(known.sorted().joined(separator: ", ")))"
        return HeraldError(.unsupportedKey, "\(field(key, at: path)): unknown field\(hint)")
    }

    private static func field(_ key: String, at path: String) -> String {
        path.isEmpty || path == "body" ? key : "\(path).\(key)"
    }

    /// The known field `key` looks like a misspelling of: the same letters but for case,
    /// `_` and `-`, or one edit away (two for names of eight letters or more). A longer name that starts with a known one (`alert_type` beside `alert`) is
    /// a field of its own, not a typo.
    static func resembled(_ key: String, among known: [String]) -> String? {
        let folded = fold(key)
        guard !folded.isEmpty else { return nil }
        var best: (name: String, distance: Int)?
        for name in known {
            let other = fold(name)
            if other == folded { return name }
            let allowed = min(other.count, folded.count) >= 8 ? 2 : (min(other.count, folded.count) >= 3 ? 1 : 0)
            guard allowed > 0, abs(other.count - folded.count) <= allowed else { continue }
            let distance = editDistance(Array(folded), Array(other))
            if distance <= allowed, distance < (best?.distance ?? .max) { best = (name, distance) }
        }
        return best?.name
    }

    private static func fold(_ name: String) -> String {
        String(name.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" }.map(Character.init))
    }

    /// Optimal string alignment distance (insertions, deletions, substitutions and swaps of
    /// neighbours).
    private static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [Int](repeating: 0, count: b.count + 1)
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            previous2 = previous
            previous = current
        }
        return previous[b.count]
    }
}

extension UnknownFields {
    /// A JSON decoder for a JPush body, collecting into this.
    public var jsonDecoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.userInfo[Self.userInfoKey] = self
        return decoder
    }
}

extension Decoder {
    /// The collector of ignored keys this decoder carries, if it decodes a JPush body.
    var unknownFields: UnknownFields? {
        userInfo[UnknownFields.userInfoKey] as? UnknownFields
    }
}
