import HeraldCore
import HeraldFCM
import HeraldFCMSandbox
import HeraldStore
import Logging
import ServiceLifecycle

/// Where a node's FCM traffic goes: Google (each service account's token endpoint, and
/// fcm.googleapis.com), or a local FCM sandbox that admits each service account before it
/// is used (`herald serve`'s embedded default, the benchmarks and the tests).
public struct FCMRouting: Sendable {
    public var endpoints: FCMClient.Endpoints
    /// Called with each service account before it is used or tried.
    public var admit: (@Sendable (FCMServiceAccount) throws -> Void)?

    public init(endpoints: FCMClient.Endpoints, admit: (@Sendable (FCMServiceAccount) throws -> Void)? = nil) {
        self.endpoints = endpoints
        self.admit = admit
    }

    public static let google = FCMRouting(endpoints: .google)

    public static func localSandbox(_ sandbox: FCMSandbox) -> FCMRouting {
        FCMRouting(
            endpoints: .init(sendBase: sandbox.baseURL, tokenURL: sandbox.tokenURL, trustedCertificatePEMs: [sandbox.certificatePEM]),
            admit: { try sandbox.admit($0) }
        )
    }
}

/// The node's FCM channel and its client, as a service: the client's connections close
/// once the center, which sends through it, has stopped.
struct FCMService: Service {
    let client: FCMClient
    let channel: FCMChannel
    let routing: FCMRouting

    init(routing: FCMRouting, store: FCMStore, logger: Logger) {
        let client = FCMClient(endpoints: routing.endpoints, logger: logger)
        self.client = client
        self.routing = routing
        channel = FCMChannel(client: client, store: ChannelStore(store: store, admit: routing.admit), logger: logger)
    }

    func run() async throws {
        try? await gracefulShutdown()
        try await client.shutdown()
    }

    /// Whether the token endpoint takes the account: nil when it does (or can't be asked
    /// now: the account is stored and tried again at the first send), else its refusal.
    func refusal(of account: FCMServiceAccount) async -> String? {
        do {
            try routing.admit?(account)
            _ = try await client.accessToken(for: account, askingAgain: true)
            return nil
        } catch FCMCredentialError.refused(let reason) {
            return reason
        } catch {
            return nil
        }
    }

    /// The store as the channel sees it, admitting each account to a local sandbox.
    struct ChannelStore: FCMChannelStore {
        let store: FCMStore
        let admit: (@Sendable (FCMServiceAccount) throws -> Void)?

        func fcmServiceAccount(appID: Int64) async throws -> (account: FCMServiceAccount, brokenReason: String?)? {
            let found = try await store.serviceAccount(appID: appID)
            if let found { try admit?(found.account) }
            return found
        }

        func markFCMCredentialsBroken(appID: Int64, reason: String) async throws {
            try await store.markBroken(appID: appID, reason: reason)
        }

        func removeFCMToken(deviceID: Int64, token: String, reason: String, messageID: Int64?) async throws {
            try await store.removeToken(deviceID: deviceID, token: token, reason: reason, messageID: messageID)
        }
    }
}
