import NIOCore

/// What the devices of a load generator received, copy by copy: each copy is one message
/// for one device (its `msg_id` on that connection). A copy that comes again with the DUP
/// flag is a redelivery MQTT allows; again without it, a duplicate.
struct CopyTally: Sendable, Equatable, CustomStringConvertible {
    /// Copies received at least once.
    var distinct = 0
    /// Copies received again without DUP.
    var duplicates = 0
    /// Copies received again with DUP.
    var redelivered = 0

    mutating func add(_ other: CopyTally) {
        distinct += other.distinct
        duplicates += other.duplicates
        redelivered += other.redelivered
    }

    /// The fields of a `report` line.
    var fields: String { "\(distinct) \(duplicates) \(redelivered)" }

    init() {}

    /// Parses ``fields``.
    init?<Fields: Collection>(fields: Fields) where Fields.Element == Substring {
        let numbers = fields.compactMap { Int($0) }
        guard numbers.count == 3 else { return nil }
        (distinct, duplicates, redelivered) = (numbers[0], numbers[1], numbers[2])
    }

    var description: String { "\(distinct) copies, \(duplicates) duplicates, \(redelivered) DUP redeliveries" }
}

/// A message id as one device's connection sees it, from the start of Herald's device
/// payload (`{"msg_id":"` and the id: up to 19 decimal digits, or the 24 hex digits of an
/// id made before msg ids took JPush's shape): two integers, so a device's set of them
/// stays small.
struct CopyKey: Hashable, Sendable {
    var high: UInt64
    var low: UInt64

    private static let prefix = Array(#"{"msg_id":""#.utf8)

    /// The key of `payload`, or nil when it doesn't start with a msg_id.
    static func of(_ payload: ByteBuffer) -> CopyKey? {
        payload.withUnsafeReadableBytes { bytes -> CopyKey? in
            guard bytes.count > prefix.count else { return nil }
            for index in prefix.indices where bytes[index] != prefix[index] { return nil }
            var digits = prefix.count
            var decimal: UInt64 = 0
            while digits < bytes.count, digits - prefix.count < 19, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[digits]) {
                decimal = decimal * 10 + UInt64(bytes[digits] - UInt8(ascii: "0"))
                digits += 1
            }
            if digits > prefix.count, digits < bytes.count, bytes[digits] == UInt8(ascii: "\"") {
                return CopyKey(high: 0, low: decimal)
            }
            guard bytes.count >= prefix.count + 24 else { return nil }
            var high: UInt64 = 0
            var low: UInt64 = 0
            for offset in 0..<24 {
                guard let nibble = hexValue(bytes[prefix.count + offset]) else { return nil }
                if offset < 16 { high = high << 4 | nibble } else { low = low << 4 | nibble }
            }
            // Kept apart from the decimal keys by the top bit.
            return CopyKey(high: high | 1 << 63, low: low)
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt64? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt64(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt64(byte - UInt8(ascii: "a") + 10)
        default: nil
        }
    }
}
