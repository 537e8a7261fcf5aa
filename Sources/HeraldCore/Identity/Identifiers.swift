/// How Herald's public identifiers and secrets are shaped.
///
/// A registration id is 20 hex characters so it fits the 23-character client identifier
/// every MQTT 3.1.1 server must accept. Devices imported from JPush keep their JPush
/// registration ids, 11 or 19 hex characters (``jpushRegistrationIDLengths``): the lengths
/// differ from Herald's, so an imported id never collides with one Herald issues.
public enum Identifiers {
    public static let appKeyLength = 24
    public static let masterSecretLength = 40
    public static let registrationIDLength = 20
    /// JPush's app keys and master secrets are both 24 lowercase hex characters; an app
    /// moved from JPush keeps them (``isMasterSecret(_:)``).
    public static let jpushMasterSecretLength = 24
    /// The lengths of JPush's registration ids (11 for the oldest SDKs, 19 since).
    public static let jpushRegistrationIDLengths = [11, 19]
    public static let deviceSecretLength = 32
    /// The length of every message id Herald makes (``MsgIDLayout``): 19 decimal digits.
    public static let msgIDLength = 19
    /// The length of the message ids Herald made before they were JPush's shape: 24 hex
    /// characters (48 bits of milliseconds since 1970, then 48 random bits). Stored ones
    /// stay valid wherever a message id is accepted.
    public static let legacyMsgIDLength = 24

    public static func newAppKey() -> String { RandomToken.hex(byteCount: appKeyLength / 2) }
    public static func newMasterSecret() -> String { RandomToken.hex(byteCount: masterSecretLength / 2) }
    public static func newRegistrationID() -> String { RandomToken.hex(byteCount: registrationIDLength / 2) }
    public static func newDeviceSecret() -> String { RandomToken.hex(byteCount: deviceSecretLength / 2) }

    /// The message id with these parts (``MsgIDLayout``), in decimal: 19 digits for any
    /// time from mid-2022 to 2084, so ids compare as text as they do as numbers.
    public static func msgID(milliseconds: UInt64, node: Int, sequence: Int) -> String {
        String(MsgIDLayout.id(time: MsgIDLayout.time(milliseconds: milliseconds), node: node, sequence: sequence))
    }

    /// The smallest message id made at `milliseconds` since 1970: every id made earlier
    /// (by any node, and every id in the legacy hex form) sorts below it, as a number and
    /// as text.
    public static func msgIDFloor(milliseconds: UInt64) -> String {
        msgID(milliseconds: milliseconds, node: 0, sequence: 0)
    }

    /// The time half of a legacy message id made at that time: every legacy id made
    /// earlier sorts below it.
    public static func legacyMsgIDTime(milliseconds: UInt64) -> String {
        let time = String(milliseconds & 0xFFFF_FFFF_FFFF, radix: 16)
        return String(repeating: "0", count: 12 - time.count) + time
    }

    /// Whether `value` has the shape of an app key (so malformed keys never reach the database).
    public static func isAppKey(_ value: String) -> Bool { isLowerHex(value, length: appKeyLength) }
    /// Whether `value` has the shape of a registration id: one Herald issued, or one
    /// imported from JPush.
    public static func isRegistrationID(_ value: String) -> Bool {
        isLowerHex(value, length: registrationIDLength) || isJPushRegistrationID(value)
    }
    /// Whether `value` has the shape of a JPush registration id (accepted only from an import).
    public static func isJPushRegistrationID(_ value: String) -> Bool {
        jpushRegistrationIDLengths.contains(value.utf8.count) && isLowerHex(value, length: value.utf8.count)
    }
    /// Whether `value` may be an app's master secret given at its creation: Herald's own
    /// shape, or JPush's.
    public static func isMasterSecret(_ value: String) -> Bool {
        isLowerHex(value, length: masterSecretLength) || isLowerHex(value, length: jpushMasterSecretLength)
    }

    /// Whether `value` has the shape of a message id: a positive decimal that fits a signed
    /// 64-bit integer, written without leading zeros (JPush's shape, which its clients
    /// read as a `long`), or a legacy id of 24 hex characters.
    public static func isMsgID(_ value: String) -> Bool {
        isDecimalMsgID(value) || isLegacyMsgID(value)
    }

    /// Whether `value` is a legacy message id (24 lowercase hex characters).
    public static func isLegacyMsgID(_ value: String) -> Bool { isLowerHex(value, length: legacyMsgIDLength) }

    static func isDecimalMsgID(_ value: String) -> Bool {
        let utf8 = value.utf8
        guard (1...19).contains(utf8.count), utf8.first != UInt8(ascii: "0"),
            utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return false }
        return Int64(value) != nil
    }

    static func isLowerHex(_ value: String, length: Int) -> Bool {
        value.utf8.count == length
            && value.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }
}
