import Foundation

/// A device's identity at Herald, kept across launches.
public struct DeviceCredentials: Sendable, Codable, Hashable {
    public var registrationID: String
    public var deviceSecret: String

    public init(registrationID: String, deviceSecret: String) {
        self.registrationID = registrationID
        self.deviceSecret = deviceSecret
    }

    enum CodingKeys: String, CodingKey {
        case registrationID = "registration_id"
        case deviceSecret = "device_secret"
    }
}

/// Where the SDK keeps the device's credentials (the Keychain on iOS, a file on Linux).
public protocol CredentialStore: Sendable {
    func load() async throws -> DeviceCredentials?
    func save(_ credentials: DeviceCredentials) async throws
}

/// Keeps credentials in memory only (tests, short-lived tools).
public actor InMemoryCredentialStore: CredentialStore {
    private var credentials: DeviceCredentials?
    public init(_ credentials: DeviceCredentials? = nil) { self.credentials = credentials }
    public func load() -> DeviceCredentials? { credentials }
    public func save(_ credentials: DeviceCredentials) { self.credentials = credentials }
}

/// Keeps credentials in a JSON file readable by the owner only.
public struct FileCredentialStore: CredentialStore {
    public let path: String
    public init(path: String) { self.path = path }

    public func load() throws -> DeviceCredentials? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try JSONDecoder().decode(DeviceCredentials.self, from: data)
    }

    public func save(_ credentials: DeviceCredentials) throws {
        let data = try JSONEncoder().encode(credentials)
        guard FileManager.default.createFile(atPath: path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw HeraldClientError("cannot write \(path)")
        }
    }
}

/// A failure the SDK reports to the app.
public struct HeraldClientError: Error, Hashable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
