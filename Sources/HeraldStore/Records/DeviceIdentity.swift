/// A device by its row id, app and registration id: what checking its credentials
/// establishes, and what a connection or a command is addressed to.
public struct DeviceIdentity: Sendable, Hashable {
    public var deviceID: Int64
    public var appID: Int64
    public var registrationID: String

    public init(deviceID: Int64, appID: Int64, registrationID: String) {
        self.deviceID = deviceID
        self.appID = appID
        self.registrationID = registrationID
    }
}

/// Why a device's credentials were refused. The gateway answers every case alike (MQTT
/// "bad user name or password"), so a stranger can't tell which registration ids exist.
public enum DeviceCredentialFailure: Error, Sendable, Hashable {
    /// No such device.
    case unknownDevice
    /// Wrong secret.
    case badCredentials
    /// The device belongs to another app.
    case notAuthorised
}
