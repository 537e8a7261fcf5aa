import Foundation
import HeraldCore
import HeraldRouting
import Logging
import ServiceLifecycle

/// What the APNs channel needs from the store: an app's credentials, and three writes.
public protocol APNsChannelStore: Sendable {
    /// The app's APNs credentials, when they last changed, and why APNs refused them when it
    /// did (then nothing is sent until new ones are uploaded); nil when the app has none.
    func apnsCredentials(appID: Int64) async throws -> (credentials: APNsCredentials, updatedAt: Date, brokenReason: String?)?
    /// APNs refused the app's credentials.
    func markAPNsCredentialsBroken(appID: Int64, reason: String) async throws
    /// APNs says a token is no longer valid, since `since` (when it said): the device's
    /// tokens are marked invalid, or its VoIP token removed (`voip`), or an ActivityKit
    /// token removed. `event`: the message whose send found it out, when it records events.
    func invalidateToken(deviceID: Int64, token: String, since: Date?, voip: Bool, event: (messageID: Int64, reason: String)?) async throws
    /// The ActivityKit token each of `deviceIDs` holds for `target`; a device without one
    /// is left out.
    func liveActivityTokens(deviceIDs: [Int64], target: LiveActivityTarget) async throws -> [Int64: String]
}

/// Apple Push Notification service as a channel: the notifications the planner routes to
/// APNs (with the VoIP push beside one that has it), Live Activity updates, and recall
/// commands, each sent as its own HTTP/2 request, concurrently (the client's stream limits
/// pace them). One client per app and environment (``APNsClients``), made from the app's
/// credentials on first use.
///
/// As a service it runs those clients, and stops them once the center, which sends
/// through it, has stopped (it is listed before the center).
public struct APNsChannel: DeliveryChannel, Service {
    public let name = "apns"
    let clients: APNsClients
    let store: any APNsChannelStore
    let metrics = APNsChannelMetrics()
    let logger: Logger

    public init(configuration: APNsChannelConfiguration, store: any APNsChannelStore, logger: Logger) {
        self.store = store
        self.logger = logger
        clients = APNsClients(store: store, configuration: configuration, logger: logger)
    }

    public func run() async {
        await withGracefulShutdownHandler {
            await clients.run()
        } onGracefulShutdown: {
            clients.shutdown()
        }
    }

    public func send(_ copies: [ChannelCopy], report: @escaping @Sendable (Int, ChannelOutcome) async -> Void) async {
        var renderings: [Int64: Rendering] = [:]
        var liveActivityTokens: [Int64: [Int64: String]] = [:]
        var unreadable: Set<Int64> = []
        for (messageID, indices) in Dictionary(grouping: copies.indices, by: { copies[$0].messageID }) {
            let first = copies[indices[0]]
            renderings[messageID] = Rendering(first)
            guard let target = first.push.audience.liveActivity else { continue }
            do {
                liveActivityTokens[messageID] = try await store.liveActivityTokens(deviceIDs: indices.map { copies[$0].deviceID }, target: target)
            } catch {
                logger.warning("Reading Live Activity tokens failed", metadata: ["error": "\(error)"])
                unreadable.insert(messageID)
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for (index, copy) in copies.enumerated() {
                let rendering = renderings[copy.messageID]!
                let unread = unreadable.contains(copy.messageID)
                let liveActivityToken = liveActivityTokens[copy.messageID]?[copy.deviceID]
                group.addTask {
                    let outcome: ChannelOutcome
                    if unread {
                        outcome = .retry(reason: Self.internalError, after: nil, attempted: false)
                    } else if copy.push.liveActivity != nil {
                        outcome = await sendLiveActivity(copy, rendering: rendering, token: liveActivityToken)
                    } else {
                        outcome = await sendNotification(copy, rendering: rendering)
                    }
                    await report(index, outcome)
                }
            }
        }
    }

    /// A recall command: a silent push (content-available, priority 5, no alert) to the
    /// device's APNs token carrying every identifier still pending recall on it.
    public func sendRecall(_ recall: ChannelRecall) async -> Bool {
        guard case .apns(let route) = recall.route else { return false }
        guard let client = try? await clients.client(appID: recall.appID, environment: route.environment) else { return false }
        let notification = APNsNotification(
            deviceToken: recall.token,
            pushType: .background,
            payload: PushRendering.apnsRecall(commandID: recall.commandID, identifiers: recall.identifiers),
            priority: .powerConsiderate,
            expiration: recall.expiresAt
        )
        do {
            let outcome = try await client.send(notification)
            metrics.outcome(outcome)
            switch outcome {
            case .delivered:
                return true
            case .invalidToken(let reason, _) where route.isWrongEnvironment(for: reason):
                // Refused where the push sent it, not where the token lives: it stays valid.
                return false
            case .invalidToken(_, let since):
                try? await store.invalidateToken(deviceID: recall.deviceID, token: recall.token, since: since, voip: false, event: nil)
                return false
            case .credentialsBroken(let reason), .credentialsRefused(let reason):
                await clients.credentialsRefused(by: client, appID: recall.appID, environment: route.environment, reason: reason)
                return false
            case .retryLater, .circuitOpen, .failed:
                return false
            }
        } catch {
            logger.warning("APNs recall push failed", metadata: ["error": "\((error as? APNsError)?.reason ?? "\(error)")"])
            return false
        }
    }

    /// A message's APNs renderings, made once for its copies in a send.
    struct Rendering: Sendable {
        /// The notification (empty when the push has none: only a notification goes to APNs).
        let notification: [UInt8]
        /// The VoIP push sent beside the notification, when the push has one.
        let voip: [UInt8]?
        /// The Live Activity update, when it is one (its `timestamp` is the message's creation).
        let liveActivity: [UInt8]?

        init(_ copy: ChannelCopy) {
            let push = copy.push
            notification = push.notification == nil ? [] : PushRendering.apnsPayload(push, msgID: copy.msgID)
            voip = push.hasVoIPCompanion ? PushRendering.voipPayload(push, msgID: copy.msgID) : nil
            liveActivity = push.liveActivity.map { liveActivity in
                PushRendering.liveActivityPayload(liveActivity, timestamp: Int64(copy.createdAt.timeIntervalSince1970), msgID: copy.msgID)
            }
        }
    }

    /// The client for the copy's app in the route's environment: nil with the outcome when
    /// there is none (no credentials, or refused ones) or it can't be made now.
    private func client(for copy: ChannelCopy, route: APNsRoute) async -> (APNsClient?, ChannelOutcome?) {
        do {
            guard let client = try await clients.client(appID: copy.appID, environment: route.environment) else { return (nil, .notConfigured) }
            return (client, nil)
        } catch {
            logger.error("APNs client unavailable", metadata: ["herald.app_id": "\(copy.appID)", "error": "\(error)"])
            return (nil, .retry(reason: Self.clientUnavailable, after: nil, attempted: false))
        }
    }

    /// Sends a copy's notification, and with the first attempt the VoIP push a notification
    /// with `notification.voip` has beside it. The copy's outcome is the notification's; the
    /// VoIP push is sent once, and what APNs answers it is counted and logged. A device with
    /// only a VoIP token gets the VoIP push as the copy's delivery.
    private func sendNotification(_ copy: ChannelCopy, rendering: Rendering) async -> ChannelOutcome {
        guard case .apns(let route) = copy.route else { return .notConfigured }
        // Content per language: the device's payload rendered for it.
        let push = copy.push.localized(for: copy.language)
        let primaryToken = push.pushType == .voip ? copy.voipToken : copy.token
        let voipToken = push.hasVoIPCompanion ? copy.voipToken : nil
        guard primaryToken != nil || voipToken != nil else { return .notConfigured }
        let (found, unavailable) = await client(for: copy, route: route)
        guard let client = found else { return unavailable ?? .notConfigured }
        let expiration = push.timeToLive == 0 ? Date(timeIntervalSince1970: 0) : copy.expiresAt
        let collapseID = push.collapseID(identifier: push.identifier(msgID: copy.msgID))
        let voip = voipToken.map { token in
            APNsNotification(
                deviceToken: token,
                pushType: .voip,
                payload: rendering.voip ?? [],
                priority: .immediate,
                expiration: expiration,
                collapseID: collapseID,
                apnsID: APNsNotification.copyID(msgID: copy.msgID, deviceToken: token, pushType: .voip)
            )
        }
        guard let primaryToken else {
            // Only the VoIP token: the VoIP push is the copy's delivery.
            guard let voip else { return .notConfigured }
            return await send(voip, client: client, route: route, copy: copy)
        }
        // The device's badge is part of the payload only when the push sets or changes it
        // (a retry or a taken-over job reads the device's badge whatever the push).
        let badge = push.notification?.ios?.badge == nil ? nil : copy.badge
        let payload =
            badge.map { PushRendering.apnsPayload(push, msgID: copy.msgID, badge: $0) }
            ?? (push.isLocalized || copy.push.isLocalized ? PushRendering.apnsPayload(push, msgID: copy.msgID) : rendering.notification)
        let pushType = APNsPushType(push.pushType)
        let notification = APNsNotification(
            deviceToken: primaryToken,
            pushType: pushType,
            payload: payload,
            priority: push.priority.flatMap(APNsPriority.init(rawValue:)),
            expiration: expiration,
            collapseID: collapseID,
            apnsID: APNsNotification.copyID(msgID: copy.msgID, deviceToken: primaryToken, pushType: pushType)
        )
        guard let voip, copy.attempts == 0 else {
            return await send(notification, client: client, route: route, copy: copy)
        }
        async let beside: Void = sendBeside(voip, client: client, route: route, copy: copy)
        let outcome = await send(notification, client: client, route: route, copy: copy)
        await beside
        return outcome
    }

    /// Sends the VoIP push that goes beside a notification: its outcome is counted and, when
    /// it isn't delivered, logged; a VoIP token APNs no longer takes is removed from the
    /// device (its APNs token stays valid).
    private func sendBeside(_ voip: APNsNotification, client: APNsClient, route: APNsRoute, copy: ChannelCopy) async {
        let appID = copy.appID
        do {
            let outcome = try await client.send(voip)
            metrics.outcome(outcome)
            switch outcome {
            case .delivered: return
            case .invalidToken(let reason, _) where route.isWrongEnvironment(for: reason):
                logger.info(
                    "APNs did not take a VoIP push in the environment the push asked for; the token is kept",
                    metadata: ["herald.app_id": "\(appID)", "herald.environment": "\(route.environment.rawValue)"]
                )
                return
            case .invalidToken(let reason, let since):
                try? await store.invalidateToken(
                    deviceID: copy.deviceID,
                    token: voip.deviceToken,
                    since: since,
                    voip: true,
                    event: copy.recordsEvents ? (copy.messageID, reason.rawValue) : nil
                )
            default: break
            }
            logger.warning("APNs did not take a VoIP push", metadata: ["herald.app_id": "\(appID)", "herald.outcome": "\(outcome)"])
        } catch {
            logger.warning(
                "APNs VoIP push failed",
                metadata: ["herald.app_id": "\(appID)", "error": "\((error as? APNsError)?.reason ?? "\(error)")"]
            )
        }
    }

    /// Sends a Live Activity update to the device's ActivityKit token (read with the batch):
    /// push type `liveactivity`, the topic's suffix follows from it, priority as asked.
    private func sendLiveActivity(_ copy: ChannelCopy, rendering: Rendering, token: String?) async -> ChannelOutcome {
        guard case .apns(let route) = copy.route, let token, let payload = rendering.liveActivity else { return .notConfigured }
        let (found, unavailable) = await client(for: copy, route: route)
        guard let client = found else { return unavailable ?? .notConfigured }
        let notification = APNsNotification(
            deviceToken: token,
            pushType: .liveactivity,
            payload: payload,
            priority: (copy.push.liveActivity?.priority).flatMap(APNsPriority.init(rawValue:)),
            expiration: copy.push.timeToLive == 0 ? Date(timeIntervalSince1970: 0) : copy.expiresAt,
            apnsID: APNsNotification.copyID(msgID: copy.msgID, deviceToken: token, pushType: .liveactivity)
        )
        return await send(notification, client: client, route: route, copy: copy)
    }

    /// Sends a copy's notification and says what became of the copy.
    private func send(_ notification: APNsNotification, client: APNsClient, route: APNsRoute, copy: ChannelCopy) async -> ChannelOutcome {
        do {
            let outcome = try await client.send(notification)
            metrics.outcome(outcome)
            switch outcome {
            case .delivered(let apnsID):
                return .sent(ChannelReceipt(requestID: apnsID, status: 200))
            case .invalidToken(let reason, _) where route.isWrongEnvironment(for: reason):
                // The push sent it where the device's token doesn't live: this push fails,
                // the token stays valid for the environment it was registered for.
                return .failed(reason: Self.wrongEnvironment, attempted: true, receipt: ChannelReceipt(requestID: notification.apnsID, status: 400))
            case .invalidToken(let reason, let since):
                do {
                    try await store.invalidateToken(
                        deviceID: copy.deviceID,
                        token: notification.deviceToken,
                        since: since,
                        voip: notification.pushType == .voip,
                        event: copy.recordsEvents ? (copy.messageID, reason.rawValue) : nil
                    )
                } catch {
                    logger.warning("Invalidating a dead APNs token failed", metadata: ["error": "\(error)"])
                }
                return .tokenDead(reason: reason.rawValue, receipt: ChannelReceipt(requestID: notification.apnsID))
            case .retryLater(let reason, let after):
                return .retry(reason: reason.rawValue, after: after, attempted: true)
            case .circuitOpen(let reason, let after):
                // Nothing was sent: not an attempt.
                return .retry(reason: reason.rawValue, after: after, attempted: false)
            case .credentialsBroken(let reason):
                await clients.credentialsRefused(by: client, appID: copy.appID, environment: route.environment, reason: reason)
                return .credentialsRefused(reason: reason.rawValue, attempted: true)
            case .credentialsRefused(let reason):
                // Not sent: APNs refused the credentials on another copy, with Apple's reason.
                await clients.credentialsRefused(by: client, appID: copy.appID, environment: route.environment, reason: reason)
                return .credentialsRefused(reason: Self.credentialsRefused, attempted: false)
            case .failed(let reason, let status):
                return .failed(reason: reason.rawValue, attempted: true, receipt: ChannelReceipt(requestID: notification.apnsID, status: status))
            }
        } catch let error as APNsError {
            metrics.error(error)
            guard error.isRetryable else { return .failed(reason: error.reason, attempted: false, receipt: .none) }
            return .retry(reason: error.reason, after: nil, attempted: true)
        } catch is CancellationError {
            return .retry(reason: APNsError.shutdown.reason, after: nil, attempted: false)
        } catch {
            logger.warning("APNs send failed", metadata: ["herald.app_id": "\(copy.appID)", "error": "\(error)"])
            return .retry(reason: Self.internalError, after: nil, attempted: false)
        }
    }

    /// Herald's reason for a copy whose app's APNs client could not be made (the
    /// credentials could not be read).
    static let clientUnavailable = "ClientUnavailable"
    /// Herald's reason for a send that failed in an unforeseen way.
    static let internalError = "InternalError"
    /// Herald's reason for a copy not sent because APNs had refused its app's credentials
    /// (on another copy, which shows Apple's reason).
    static let credentialsRefused = APNsError.credentialsRefused.reason
    /// Herald's reason for a copy APNs refused with BadDeviceToken in the environment the
    /// push asked for (`apns_production`), which is not its device's: the token is kept.
    static let wrongEnvironment = APNsAdvice.wrongEnvironment
}

extension APNsRoute {
    /// APNs' refusal says only that the token is not of the environment the push forced,
    /// not that the token is dead: JPush's clients send `apns_production: false` by
    /// default, and a production token must survive that.
    func isWrongEnvironment(for reason: APNsReason) -> Bool {
        isForcedElsewhere && reason == .badDeviceToken
    }
}

extension APNsPushType {
    init(_ pushType: IOSPushType) {
        switch pushType {
        case .alert: self = .alert
        case .background: self = .background
        case .voip: self = .voip
        }
    }
}
