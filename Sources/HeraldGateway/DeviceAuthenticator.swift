import Crypto
import HeraldCore
import HeraldMQTT
import HeraldStore
import NIOConcurrencyHelpers

/// Checks CONNECT credentials against the store, remembering successes for a while: a
/// device reconnecting with the same credentials is let in without a query.
///
/// Only successes are cached, with a digest of the app key and password they were made
/// with, so a rotated secret is never shadowed: new credentials miss the cache and go to
/// the store. An entry is the device (whose registration id string the connection then
/// shares) and that digest: about 170 bytes a device with the dictionary's spare room
/// (heaptrack, 19,000 devices).
final class DeviceAuthenticator: Sendable {
    private struct Entry {
        var device: DeviceIdentity
        /// SHA-256 of the app key, a zero byte and the password.
        var credentials: SIMD4<UInt64>
        var expires: ContinuousClock.Instant
    }

    private let store: GatewayStore
    private let ttl: Duration
    private let cache = NIOLockedValueBox([String: Entry]())

    init(store: GatewayStore, ttl: Duration) {
        self.store = store
        self.ttl = ttl
    }

    func authenticate(clientID: String, username: String, password: String) async -> AuthResult {
        var hasher = SHA256()
        hasher.update(data: Array(username.utf8))
        hasher.update(data: [0])
        hasher.update(data: Array(password.utf8))
        let credentials = hasher.finalize().withUnsafeBytes { $0.loadUnaligned(as: SIMD4<UInt64>.self) }
        let now = ContinuousClock.now
        if let entry = cache.withLockedValue({ $0[clientID] }), entry.expires > now, entry.credentials == credentials {
            return .accepted(entry.device)
        }
        do {
            switch try await store.authenticateDevice(registrationID: clientID, appKey: username, deviceSecret: password) {
            case .success(let device):
                cache.withLockedValue { cache in
                    if cache.count > 200_000 { cache.removeAll(keepingCapacity: true) }
                    cache[device.registrationID] = Entry(device: device, credentials: credentials, expires: now + ttl)
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
