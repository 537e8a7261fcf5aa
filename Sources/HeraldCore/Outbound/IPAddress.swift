import Foundation

/// An IPv4 or IPv6 address, read from text as resolvers read it: IPv4 in every form
/// `inet_aton` takes (`127.0.0.1`, `2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1`), so a
/// host that a resolver would turn into an internal address is seen as one here too.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6), in network order.
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Reads `text`: IPv4 (any `inet_aton` form) or IPv6, with or without brackets and a
    /// zone (`[fe80::1%eth0]`). Nil when it is not an address (a host name).
    public init?(_ text: some StringProtocol) {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        if let zone = text.firstIndex(of: "%") { text = text[..<zone] }
        if let bytes = Self.ipv4(text) ?? Self.ipv6(text) {
            self.bytes = bytes
        } else {
            return nil
        }
    }

    public var isIPv4: Bool { bytes.count == 4 }

    /// The IPv4 address an IPv6 address carries (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible
    /// `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:aabb:ccdd::`): what it reaches.
    public var embeddedIPv4: IPAddress? {
        guard bytes.count == 16 else { return nil }
        let head = bytes[0..<12]
        if head.elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]) || (head.allSatisfy { $0 == 0 } && bytes[12...].contains { $0 != 0 }) {
            return IPAddress(bytes: Array(bytes[12...]))
        }
        if head.elementsEqual([0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0]) { return IPAddress(bytes: Array(bytes[12...])) }
        if bytes[0] == 0x20, bytes[1] == 0x02 { return IPAddress(bytes: Array(bytes[2..<6])) }
        return nil
    }

    public var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        var groups: [String] = []
        for index in stride(from: 0, to: 16, by: 2) {
            groups.append(String(UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]), radix: 16))
        }
        return groups.joined(separator: ":")
    }

    /// `inet_aton`: one to four parts, each decimal, octal (leading 0) or hex (0x); the last
    /// part fills the bytes the others left.
    private static func ipv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...4).contains(parts.count) else { return nil }
        var values: [UInt64] = []
        for part in parts {
            guard !part.isEmpty else { return nil }
            let lower = part.lowercased()
            let (digits, radix) =
                lower.hasPrefix("0x") ? (lower.dropFirst(2), 16) : lower.count > 1 && lower.hasPrefix("0") ? (lower.dropFirst(), 8) : (lower[...], 10)
            // Digits only (no sign), as `inet_aton`; `0x` alone is 0.
            guard digits.allSatisfy({ $0.isASCII && $0.isHexDigit }) else { return nil }
            guard let value = digits.isEmpty ? 0 : UInt64(digits, radix: radix) else { return nil }
            values.append(value)
        }
        let last = values.removeLast()
        guard values.allSatisfy({ $0 <= 0xFF }), last < (UInt64(1) << (8 * UInt64(4 - values.count))) else { return nil }
        var bytes = values.map { UInt8($0) }
        for shift in stride(from: 8 * (3 - bytes.count), through: 0, by: -8) {
            bytes.append(UInt8((last >> UInt64(shift)) & 0xFF))
        }
        return bytes
    }

    private static func ipv6(_ text: Substring) -> [UInt8]? {
        guard text.contains(":") else { return nil }
        let all: [UInt16]
        if let gap = text.range(of: "::") {
            let after = text[gap.upperBound...]
            guard !after.contains("::"), let head = groups(text[..<gap.lowerBound], last: after.isEmpty), let tail = groups(after, last: true),
                head.count + tail.count < 8
            else { return nil }
            all = head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        } else {
            guard let groups = groups(text, last: true), groups.count == 8 else { return nil }
            all = groups
        }
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }

    /// Colon-separated hex groups; `last`: the end of the address, which may be a dotted
    /// IPv4 address (two groups).
    private static func groups(_ text: Substring, last: Bool) -> [UInt16]? {
        guard !text.isEmpty else { return [] }
        var parts = text.split(separator: ":", omittingEmptySubsequences: false)
        var trailing: [UInt16] = []
        if last, let final = parts.last, final.contains(".") {
            guard let v4 = ipv4Dotted(final) else { return nil }
            trailing = [UInt16(v4[0]) << 8 | UInt16(v4[1]), UInt16(v4[2]) << 8 | UInt16(v4[3])]
            parts.removeLast()
        }
        var groups: [UInt16] = []
        for part in parts {
            guard (1...4).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isHexDigit }), let value = UInt16(part, radix: 16) else {
                return nil
            }
            groups.append(value)
        }
        return groups + trailing
    }

    /// Strict dotted quad, as the tail of an IPv6 address.
    private static func ipv4Dotted(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }), let value = UInt8(part) else { return nil }
            bytes.append(value)
        }
        return bytes
    }
}

/// A range of addresses in CIDR notation (`10.0.0.0/8`, `fd00::/8`, `127.0.0.1`: one address).
public struct IPRange: Sendable, Hashable, CustomStringConvertible {
    public let address: IPAddress
    public let prefix: Int

    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]), parts[0].contains(address.isIPv4 ? "." : ":") else { return nil }
        let bits = address.bytes.count * 8
        var prefix = bits
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...bits).contains(given) else { return nil }
            prefix = given
        }
        self.init(address: address, prefix: prefix)
    }

    public init(address: IPAddress, prefix: Int) {
        self.address = address
        self.prefix = prefix
    }

    /// Whether `candidate` is in the range (an IPv4 range never holds an IPv6 address).
    public func contains(_ candidate: IPAddress) -> Bool {
        guard candidate.bytes.count == address.bytes.count else { return false }
        var remaining = prefix
        for (mine, theirs) in zip(address.bytes, candidate.bytes) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            guard mine & mask == theirs & mask else { return false }
            remaining -= 8
        }
        return true
    }

    public var description: String { "\(address)/\(prefix)" }
}
