import Crypto
import HeraldCore
import HeraldMQTT
import HeraldStore
import NIOConcurrencyHelpers

/// Checks CONNECT credentials against the store, remembering successes for a while: a
/// device reconnecting with the same credentials is let in without a query.
///
/// Only successes are cached, keyed by the digest of the password, so a rotated secret
/// is never shadowed: new credentials miss the cache and go to the store.
final class DeviceAuthenticator: Sendable {
    private struct Entry {
        var device: GatewayDevice
        var appKey: String
        var expires: ContinuousClock.Instant
    }

    private let store: HeraldStore
    private let ttl: Duration
    private let cache = NIOLockedValueBox([String: Entry]())

    init(store: HeraldStore, ttl: Duration) {
        self.store = store
        self.ttl = ttl
    }

    func authenticate(clientID: String, username: String, password: String) async -> AuthResult {
        let key = clientID + "\u{0}" + Hex.encode(SHA256.hash(data: Array(password.utf8)))
        let now = ContinuousClock.now
        if let entry = cache.withLockedValue({ $0[key] }), entry.expires > now, entry.appKey == username {
            return .accepted(entry.device)
        }
        do {
            switch try await store.authenticateGatewayDevice(registrationID: clientID, appKey: username, deviceSecret: password) {
            case .success(let device):
                cache.withLockedValue { cache in
                    if cache.count > 200_000 { cache.removeAll(keepingCapacity: true) }
                    cache[key] = Entry(device: device, appKey: username, expires: now + ttl)
                }
                return .accepted(device)
            case .failure(.unknownDevice):
                return .refused(.identifierRejected)
            case .failure(.badCredentials):
                return .refused(.badUsernameOrPassword)
            case .failure(.notAuthorised):
                return .refused(.notAuthorized)
            }
        } catch {
            return .refused(.serverUnavailable)
        }
    }
}

/// The answer to a CONNECT.
enum AuthResult: Sendable {
    case accepted(GatewayDevice)
    case refused(MQTTPacket.ConnAck.ReturnCode)
}
