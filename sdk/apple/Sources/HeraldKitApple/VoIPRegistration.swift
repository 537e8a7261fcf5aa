#if canImport(UserNotifications) && canImport(PushKit) && !os(macOS) && !os(tvOS) && !os(watchOS)
import Foundation
import HeraldKit
import Logging
import PushKit

/// Registers for VoIP pushes and sends their token to Herald. A VoIP push goes to
/// `incoming`, which must report the call to CallKit before it returns (iOS ends an app that
/// doesn't), and call `completion` when done.
public final class VoIPRegistration: NSObject, PKPushRegistryDelegate {
    private let registry: PKPushRegistry
    let api: HeraldAPIClient
    let credentials: any CredentialStore
    let logger: Logger
    let incoming: (PKPushPayload, @escaping @Sendable () -> Void) -> Void

    /// - Parameter queue: where the registry calls back; nil is the main queue.
    public init(
        api: HeraldAPIClient,
        credentials: any CredentialStore,
        queue: DispatchQueue? = nil,
        logger: Logger,
        incoming: @escaping (PKPushPayload, @escaping @Sendable () -> Void) -> Void
    ) {
        self.registry = PKPushRegistry(queue: queue)
        self.api = api
        self.credentials = credentials
        self.logger = logger
        self.incoming = incoming
        super.init()
        registry.delegate = self
        registry.desiredPushTypes = [.voIP]
    }

    /// Sends the token PushKit holds again: after the device registered with Herald, if the
    /// token came before it had credentials.
    public func uploadToken() {
        if let token = registry.pushToken(for: .voIP) { upload(token) }
    }

    public func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType) {
        guard type == .voIP else { return }
        upload(pushCredentials.token)
    }

    public func pushRegistry(
        _ registry: PKPushRegistry,
        didReceiveIncomingPushWith payload: PKPushPayload,
        for type: PKPushType,
        completion: @escaping @Sendable () -> Void
    ) {
        incoming(payload, completion)
    }

    private func upload(_ token: Data) {
        let (api, credentials, logger) = (api, credentials, logger)
        Task {
            do {
                guard let held = try await credentials.load() else {
                    logger.info("VoIP token before the device registered; uploadToken() sends it later")
                    return
                }
                try await api.setVoIPToken(token, credentials: held)
            } catch {
                logger.warning("cannot send the VoIP token", metadata: ["error": "\(error)"])
            }
        }
    }
}
#endif
