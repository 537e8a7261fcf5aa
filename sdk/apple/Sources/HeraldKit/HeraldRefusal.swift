/// A refusal of the gateway that retrying can't cure: the client stops and says why.
public enum HeraldRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The device's secret, or the app key, is wrong (CONNACK 4): register again.
    case badCredentials
    /// The device or its app is not allowed to connect (CONNACK 5): it was deleted, or its
    /// app was.
    case notAuthorized
    /// The gateway does not take this registration id as a client id (CONNACK 2).
    case identifierRejected
    /// The gateway does not speak this SDK's MQTT version (CONNACK 1).
    case unacceptableProtocolVersion

    public var description: String {
        switch self {
        case .badCredentials: "the gateway refused the device's credentials: register again"
        case .notAuthorized: "the gateway does not allow this device or its app to connect"
        case .identifierRejected: "the gateway refused the registration id as a client id"
        case .unacceptableProtocolVersion: "the gateway does not speak MQTT 3.1.1"
        }
    }
}
