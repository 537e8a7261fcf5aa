import Foundation
import HeraldCore
import HeraldRouting
import Logging
import Metrics
import NIOConcurrencyHelpers

/// What the FCM channel needs from the store: an app's service account, and two writes.
public protocol FCMChannelStore: Sendable {
    /// The app's service account, and why FCM refused it when it did (then nothing is sent
    /// until new credentials are uploaded); nil when the app has none.
    func fcmServiceAccount(appID: Int64) async throws -> (account: FCMServiceAccount, brokenReason: String?)?
    /// FCM (or its token endpoint) refused the app's credentials.
    func markFCMCredentialsBroken(appID: Int64, reason: String) async throws
    /// FCM says the device's token is dead: it is removed (if it is still the device's)
    /// and never used again; `messageID`: the copy that learned it, for its event (nil: a
    /// command learned it, and no event is written).
    func removeFCMToken(deviceID: Int64, token: String, reason: String, messageID: Int64?) async throws
}

/// Firebase Cloud Messaging as a channel: the copies the planner routes to FCM, each sent
/// as its own request (FCM's HTTP v1 API takes one token per message), concurrently.
public struct FCMChannel: DeliveryChannel {
    public let name = "fcm"
    let client: FCMClient
    let store: any FCMChannelStore
    let logger: Logger
    let sent: Counter
    let failures: Counter

    public init(client: FCMClient, store: any FCMChannelStore, logger: Logger) {
        self.client = client
        self.store = store
        self.logger = logger
        sent = Counter(label: "herald_fcm_sent_total")
        failures = Counter(label: "herald_fcm_failed_total")
    }

    public func send(_ copies: [ChannelCopy], report: @escaping @Sendable (Int, ChannelOutcome) async -> Void) async {
        for (appID, indices) in Dictionary(grouping: copies.indices, by: { copies[$0].appID }) {
            let credentials: (account: FCMServiceAccount, brokenReason: String?)?
            do {
                credentials = try await store.fcmServiceAccount(appID: appID)
            } catch {
                logger.warning("Reading FCM credentials failed", metadata: ["herald.app_id": "\(appID)", "error": "\(error)"])
                for index in indices { await report(index, .retry(reason: "ClientUnavailable", after: nil, attempted: false)) }
                continue
            }
            guard let credentials else {
                for index in indices { await report(index, .notConfigured) }
                continue
            }
            if let broken = credentials.brokenReason {
                for index in indices { await report(index, .credentialsRefused(reason: broken, attempted: false)) }
                continue
            }
            // Once FCM refuses the credentials, the copies not yet sent aren't.
            let refused = NIOLockedValueBox<String?>(nil)
            await withTaskGroup(of: Void.self) { group in
                for index in indices {
                    group.addTask {
                        if let reason = refused.withLockedValue({ $0 }) {
                            await report(index, .credentialsRefused(reason: reason, attempted: false))
                            return
                        }
                        let outcome = await send(copies[index], account: credentials.account)
                        if case .credentialsRefused(let reason, _) = outcome { refused.withLockedValue { $0 = reason } }
                        await report(index, outcome)
                    }
                }
            }
        }
    }

    public func sendRecall(_ recall: ChannelRecall) async -> Bool {
        guard let credentials = try? await store.fcmServiceAccount(appID: recall.appID), credentials.brokenReason == nil else { return false }
        let message = FCMMessage.recall(
            token: recall.token,
            commandID: recall.commandID,
            identifiers: recall.identifiers,
            expiresAt: recall.expiresAt
        )
        switch await client.send(message, account: credentials.account) {
        case .delivered:
            return true
        case .tokenDead(let reason):
            try? await store.removeFCMToken(deviceID: recall.deviceID, token: recall.token, reason: reason, messageID: nil)
            return false
        case .credentialsRefused(let reason):
            try? await store.markFCMCredentialsBroken(appID: recall.appID, reason: reason)
            return false
        case .retryLater, .failed:
            return false
        }
    }

    private func send(_ copy: ChannelCopy, account: FCMServiceAccount) async -> ChannelOutcome {
        guard let token = copy.token else { return .notConfigured }
        let message = FCMMessage(push: copy.push, msgID: copy.msgID, token: token, expiresAt: copy.expiresAt)
        switch await client.send(message, account: account) {
        case .delivered:
            sent.increment()
            return .sent(.none)
        case .tokenDead(let reason):
            failures.increment()
            do {
                try await store.removeFCMToken(deviceID: copy.deviceID, token: token, reason: reason, messageID: copy.messageID)
            } catch {
                logger.warning("Removing a dead FCM token failed", metadata: ["error": "\(error)"])
            }
            return .tokenDead(reason: reason, receipt: .none)
        case .retryLater(let reason, let after):
            failures.increment()
            return .retry(reason: reason, after: after, attempted: true)
        case .credentialsRefused(let reason):
            failures.increment()
            logger.error(
                "FCM refused the app's credentials: nothing more goes to FCM for it until new ones are uploaded",
                metadata: ["herald.app_id": "\(copy.appID)", "herald.reason": "\(reason)"]
            )
            try? await store.markFCMCredentialsBroken(appID: copy.appID, reason: reason)
            return .credentialsRefused(reason: reason, attempted: true)
        case .failed(let reason, _):
            failures.increment()
            return .failed(reason: reason, attempted: true, receipt: .none)
        }
    }
}
