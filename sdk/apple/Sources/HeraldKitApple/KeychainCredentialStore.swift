#if canImport(UserNotifications) && canImport(Security)
import Foundation
import HeraldKit
import Security

/// Keeps the device's credentials in the Keychain: a generic password (service, account),
/// readable after the first unlock, on this device only (never in a backup restored
/// elsewhere). With an access group (`TEAMID.group.com.example.shop`), the app and its
/// extensions share it.
public struct KeychainCredentialStore: CredentialStore {
    public let service: String
    public let account: String
    public let accessGroup: String?

    public init(service: String = "herald", account: String = "device", accessGroup: String? = nil) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
    }

    public func load() throws -> DeviceCredentials? {
        var query = item
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = result as? Data else {
            throw HeraldClientError("cannot read the credentials from the Keychain (OSStatus \(status))")
        }
        return try JSONDecoder().decode(DeviceCredentials.self, from: data)
    }

    public func save(_ credentials: DeviceCredentials) throws {
        let values: [String: Any] = [
            kSecValueData as String: try JSONEncoder().encode(credentials),
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        var status = SecItemUpdate(item as CFDictionary, values as CFDictionary)
        if status == errSecItemNotFound {
            status = SecItemAdd(item.merging(values) { $1 } as CFDictionary, nil)
        }
        guard status == errSecSuccess else {
            throw HeraldClientError("cannot write the credentials to the Keychain (OSStatus \(status))")
        }
    }

    /// The item: its class, service, account and access group.
    private var item: [String: Any] {
        var item: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        item[kSecAttrAccessGroup as String] = accessGroup
        return item
    }
}
#endif
