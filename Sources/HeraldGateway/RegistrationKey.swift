/// A registration id as the gateway's tables key it: Herald's ids (20 lowercase hex
/// characters) and JPush's (11 or 19) packed into the key itself, four bits a character,
/// so a table of connected or recently authenticated devices holds no string of its own
/// for each. Any other id (a test's, say) is kept as its string.
///
/// The tables outlive the connections' channels (an idle connection is parked without
/// one, see ``ParkingLot``): a string per entry, allocated while the connection was set
/// up, would sit among the freed channels' memory and keep each page of it resident.
struct RegistrationKey: Hashable, Sendable {
    private enum Storage: Hashable {
        /// Up to 24 characters: the first 16 in `high`, the rest in `low`, most significant
        /// first; `count` tells "0a" from "a".
        case packed(high: UInt64, low: UInt32, count: UInt8)
        case string(String)
    }

    private let storage: Storage

    static let maximumPacked = 24
    private static let digits = Array("0123456789abcdef".utf8)

    init(_ registrationID: String) {
        storage = Self.pack(registrationID.utf8).map { .packed(high: $0.high, low: $0.low, count: $0.count) } ?? .string(registrationID)
    }

    private static func pack(_ utf8: String.UTF8View) -> (high: UInt64, low: UInt32, count: UInt8)? {
        guard !utf8.isEmpty, utf8.count <= maximumPacked else { return nil }
        var high: UInt64 = 0
        var low: UInt32 = 0
        for (index, byte) in utf8.enumerated() {
            let nibble: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = byte - UInt8(ascii: "a") + 10
            default: return nil
            }
            if index < 16 {
                high = high << 4 | UInt64(nibble)
            } else {
                low = low << 4 | UInt32(nibble)
            }
        }
        return (high, low, UInt8(utf8.count))
    }

    /// Whether the key holds its id without a string (every id Herald or JPush makes).
    var isPacked: Bool {
        if case .packed = storage { return true }
        return false
    }

    /// The registration id.
    var string: String {
        switch storage {
        case .string(let string):
            return string
        case .packed(let high, let low, let count):
            let digits = Self.digits
            let count = Int(count)
            return String(unsafeUninitializedCapacity: count) { buffer in
                let inHigh = min(count, 16)
                for index in 0..<inHigh {
                    buffer[index] = digits[Int(high >> (4 * UInt64(inHigh - 1 - index)) & 0xF)]
                }
                for index in inHigh..<count {
                    buffer[index] = digits[Int(low >> (4 * UInt32(count - 1 - index)) & 0xF)]
                }
                return count
            }
        }
    }
}
