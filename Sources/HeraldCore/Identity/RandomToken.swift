/// Random identifiers and secrets, rendered as lowercase hex.
public enum RandomToken {
    /// `byteCount` random bytes from the system's cryptographic generator, as hex.
    public static func hex(byteCount: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return hex(byteCount: byteCount, using: &generator)
    }

    /// `byteCount` random bytes from `generator`, as hex.
    /// Eight bytes per draw: the system generator makes a system call for each one, and
    /// a message id is made for every push.
    public static func hex<G: RandomNumberGenerator>(byteCount: Int, using generator: inout G) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount + 7)
        while bytes.count < byteCount {
            withUnsafeBytes(of: generator.next()) { bytes.append(contentsOf: $0) }
        }
        return Hex.encode(bytes.prefix(byteCount))
    }
}

/// Lowercase hexadecimal encoding and decoding.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    public static func encode<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of a hex string (either case), or nil when it is not hex of even length.
    public static func decode(_ string: String) -> [UInt8]? {
        let utf8 = Array(string.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = value(utf8[index]), let low = value(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static func value(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): char - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): char - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): char - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
