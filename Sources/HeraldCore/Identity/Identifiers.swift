/// How Herald's public identifiers and secrets are shaped.
///
/// A registration id is 20 hex characters so it fits the 23-character client identifier
/// every MQTT 3.1.1 server must accept.
public enum Identifiers {
    public static let appKeyLength = 24
    public static let masterSecretLength = 40
    public static let registrationIDLength = 20
    public static let deviceSecretLength = 32

    public static func newAppKey() -> String { RandomToken.hex(byteCount: appKeyLength / 2) }
    public static func newMasterSecret() -> String { RandomToken.hex(byteCount: masterSecretLength / 2) }
    public static func newRegistrationID() -> String { RandomToken.hex(byteCount: registrationIDLength / 2) }
    public static func newDeviceSecret() -> String { RandomToken.hex(byteCount: deviceSecretLength / 2) }

    /// Whether `value` has the shape of an app key (so malformed keys never reach the database).
    public static func isAppKey(_ value: String) -> Bool { isLowerHex(value, length: appKeyLength) }
    /// Whether `value` has the shape of a registration id.
    public static func isRegistrationID(_ value: String) -> Bool { isLowerHex(value, length: registrationIDLength) }

    static func isLowerHex(_ value: String, length: Int) -> Bool {
        value.utf8.count == length
            && value.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }
}
