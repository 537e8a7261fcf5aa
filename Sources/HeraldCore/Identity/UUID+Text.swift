import Foundation
import Synchronization

extension UUID {
    /// A random (version 4) UUID from the system's random number generator.
    ///
    /// Foundation's `UUID()` on Linux opens and reads `/dev/urandom` for every one, which
    /// showed up at APNs rates (one apns-id per notification).
    public static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A UUID unique to this process and, with overwhelming likelihood, to every other: 60
    /// random bits chosen once per process, then a 62-bit counter. No system call, where
    /// ``random()`` costs one; for identifiers such as apns-id that must be unique, not
    /// unguessable.
    public static func unique() -> UUID {
        UUID(version4High: UniqueUUIDs.prefix, low: UniqueUUIDs.counter.wrappingAdd(1, ordering: .relaxed).oldValue)
    }

    public static func random(using generator: inout some RandomNumberGenerator) -> UUID {
        UUID(version4High: generator.next(), low: generator.next())
    }

    /// Version 4 in the high nibble of byte 6, variant 10 in the top bits of byte 8; the
    /// other 122 bits from `high` and `low`.
    private init(version4High high: UInt64, low: UInt64) {
        self.init(
            high: (high & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000,
            low: (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        )
    }

    /// The canonical text in lowercase (`8-4-4-4-12` hex digits), as APNs writes apns-id;
    /// without Foundation's formatter.
    public var lowercasedString: String {
        let (high, low) = halves
        return String(unsafeUninitializedCapacity: 36) { buffer in
            let digits: StaticString = "0123456789abcdef"
            var index = 0
            for nibble in 0..<32 {
                if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 {
                    buffer[index] = UInt8(ascii: "-")
                    index += 1
                }
                let word = nibble < 16 ? high : low
                let shift = UInt64(60 - 4 * (nibble % 16))
                buffer[index] = digits.utf8Start[Int((word >> shift) & 0xF)]
                index += 1
            }
            return index
        }
    }

    /// Parses the canonical text (`8-4-4-4-12` hex digits, either case); nil for anything else.
    public init?(canonical text: String) {
        var text = text
        guard let (high, low) = text.withUTF8(Self.parseCanonical) else { return nil }
        self.init(high: high, low: low)
    }

    private static func parseCanonical(_ bytes: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64)? {
        guard bytes.count == 36 else { return nil }
        var halves: (UInt64, UInt64) = (0, 0)
        var nibbles = 0
        for position in 0..<36 {
            let byte = bytes[position]
            if position == 8 || position == 13 || position == 18 || position == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            let value: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = byte &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = byte &- UInt8(ascii: "A") &+ 10
            default: return nil
            }
            if nibbles < 16 {
                halves.0 = halves.0 << 4 | UInt64(value)
            } else {
                halves.1 = halves.1 << 4 | UInt64(value)
            }
            nibbles += 1
        }
        return halves
    }

    private init(high: UInt64, low: UInt64) {
        let h = high.bigEndian
        let l = low.bigEndian
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { bytes in
            bytes.storeBytes(of: h, toByteOffset: 0, as: UInt64.self)
            bytes.storeBytes(of: l, toByteOffset: 8, as: UInt64.self)
        }
        self.init(uuid: uuid)
    }

    private var halves: (high: UInt64, low: UInt64) {
        withUnsafeBytes(of: uuid) { bytes in
            (
                UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
    }
}

/// The per-process state of ``Foundation/UUID/unique()``.
private enum UniqueUUIDs {
    /// Random; its version nibble is overwritten.
    static let prefix = UInt64.random(in: .min ... .max)
    /// Starts at a random point so a restarted process doesn't repeat its first ids.
    static let counter = Atomic<UInt64>(UInt64.random(in: .min ... .max))
}
