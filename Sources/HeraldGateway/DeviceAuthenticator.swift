import Crypto
import HeraldCore
import HeraldMQTT
import HeraldStore
import NIOConcurrencyHelpers
import NIOCore

/// Checks CONNECT credentials against the store, remembering successes for a while: a
/// device reconnecting with the same credentials is let in without a query.
///
/// Only successes are cached, with a digest of the app key and password they were made
/// with, so a rotated secret is never shadowed: new credentials miss the cache and go to
/// the store. An entry is keyed by the registration id, packed (``RegistrationKey``: no
/// string of its own outlives the connection's setup), and holds the device's ids, half
/// that digest and when it expires: 64 bytes a slot with its key (it was 96, with the
/// whole digest, the device's identity and a 16-byte instant; the dictionary's spare room
/// multiplies either).
final class DeviceAuthenticator: Sendable {
    private struct Entry {
        var deviceID: Int64
        var appID: Int64
        /// The first 128 bits of SHA-256 over the app key, a zero byte and the password:
        /// telling cached credentials from new ones needs no more.
        var credentials: SIMD2<UInt64>
        /// ``NIODeadline/uptimeNanoseconds`` of the entry's end.
        var expires: UInt64
    }

    private let store: GatewayStore
    private let ttl: Duration
    private let cache = NIOLockedValueBox([RegistrationKey: Entry]())

    init(store: GatewayStore, ttl: Duration) {
        self.store = store
        self.ttl = ttl
    }

    func authenticate(clientID: String, username: String, password: String) async -> AuthResult {
        var hasher = SHA256()
        hasher.update(data: Array(username.utf8))
        hasher.update(data: [0])
        hasher.update(data: Array(password.utf8))
        let credentials = hasher.finalize().withUnsafeBytes { $0.loadUnaligned(as: SIMD2<UInt64>.self) }
        let now = NIODeadline.now().uptimeNanoseconds
        let key = RegistrationKey(clientID)
        let cached = cache.withLockedValue { cache -> DeviceIdentity? in
            guard let entry = cache[key], entry.expires > now, entry.credentials == credentials else { return nil }
            return DeviceIdentity(deviceID: entry.deviceID, appID: entry.appID, registrationID: clientID)
        }
        if let cached { return .accepted(cached) }
        do {
            switch try await store.authenticateDevice(registrationID: clientID, appKey: username, deviceSecret: password) {
            case .success(let device):
                cache.withLockedValue { cache in
                    if cache.count > 200_000 { cache.removeAll(keepingCapacity: true) }
                    cache[RegistrationKey(device.registrationID)] = Entry(
                        deviceID: device.deviceID,
                        appID: device.appID,
                        credentials: credentials,
                        expires: now + UInt64(TimeAmount(ttl).nanoseconds)
                    )
                }
                return .accepted(device)
            case .failure:
                // One answer whether the device doesn't exist, belongs to another app or
                // has another secret: a stranger learns nothing about which ids exist.
                return .refused(.badUsernameOrPassword)
            }
        } catch {
            return .refused(.serverUnavailable)
        }
    }
}

/// The answer to a CONNECT.
enum AuthResult: Sendable {
    case accepted(DeviceIdentity)
    case refused(MQTTPacket.ConnAck.ReturnCode)
}
