import Foundation
import HeraldAPNs
import HeraldCore
import HeraldRouting
import HeraldStore
import Logging

extension DeliveryRouter {
    /// Sends notifications to APNs concurrently (the client's stream limits pace them) and
    /// records each answer as it comes, with the answers of the moment (``recorder``): a
    /// copy APNs took shows as sent at once, not when the slowest copy of its batch is
    /// answered (or times out), and a crash meanwhile doesn't send it again. Returns the
    /// outcomes that could not be recorded, for the caller to record with its own.
    func sendToAPNs(_ prepared: Prepared, targets: [FanOutTarget], attempts: Int) async -> [DeliveryUpdate] {
        guard !targets.isEmpty else { return [] }
        let messageID = prepared.message.id
        var liveActivityTokens: [Int64: String] = [:]
        if let target = prepared.message.push.audience.liveActivity {
            do {
                liveActivityTokens = try await store.apns.liveActivityTokens(deviceIDs: targets.map(\.deviceID), target: target)
            } catch {
                logger.warning("Reading Live Activity tokens failed", metadata: ["error": "\(error)"])
                return targets.map { retry($0, reason: Self.internalError, attempts: attempts, prepared: prepared, attempted: false) }
            }
        }
        // Content per language: each device's payload rendered for it (its default content
        // when its language can't be read now).
        var languages: [Int64: String] = [:]
        if prepared.message.push.isLocalized {
            do {
                languages = try await self.languages(of: targets)
            } catch {
                logger.warning("Could not read the devices' languages", metadata: ["error": "\(error)"])
            }
        }
        return await withTaskGroup(of: DeliveryUpdate?.self) { group in
            for target in targets {
                let liveActivityToken = liveActivityTokens[target.deviceID]
                let language = languages[target.deviceID]
                group.addTask {
                    var update =
                        prepared.isLiveActivity
                        ? await self.sendLiveActivity(prepared, target: target, token: liveActivityToken, attempts: attempts)
                        : await self.sendToAPNs(prepared, target: target, language: language, attempts: attempts)
                    if update.event == nil { update.event = prepared.event() }
                    return await self.recorder.submit((messageID, update)) ? nil : update
                }
            }
            var unrecorded: [DeliveryUpdate] = []
            for await update in group {
                if let update { unrecorded.append(update) }
            }
            return unrecorded
        }
    }

    /// Sends a copy's APNs notification, and with the first attempt the VoIP push a
    /// notification with `notification.voip` has beside it. The copy's outcome is the
    /// notification's; the VoIP push is sent once, and what APNs answers it is counted and
    /// logged. A device with only a VoIP token gets the VoIP push as the copy's delivery.
    private func sendToAPNs(_ prepared: Prepared, target: FanOutTarget, language: String?, attempts: Int) async -> DeliveryUpdate {
        let message = prepared.message
        let push = message.push.localized(for: language)
        let route = APNsRoute(push: push, target: target)
        let environment = route.environment
        let primaryToken = push.pushType == .voip ? target.voipToken : target.apnsToken
        let voipToken = push.hasVoIPCompanion ? target.voipToken : nil
        guard primaryToken != nil || voipToken != nil else {
            return DeliveryUpdate(deviceID: target.deviceID, state: prepared.stored ? .waiting : .expired)
        }
        let client: APNsClient?
        do {
            client = try await apns.client(appID: message.appID, environment: environment)
        } catch {
            logger.error("APNs client unavailable", metadata: ["herald.app_id": "\(message.appID)", "error": "\(error)"])
            return retry(target, reason: Self.clientUnavailable, attempts: attempts, prepared: prepared, attempted: false)
        }
        guard let client else {
            return DeliveryUpdate(deviceID: target.deviceID, state: prepared.stored ? .waiting : .expired)
        }
        let expiration = push.timeToLive == 0 ? Date(timeIntervalSince1970: 0) : message.expiresAt
        let voip = voipToken.map { token in
            APNsNotification(
                deviceToken: token,
                pushType: .voip,
                payload: prepared.voipPayload ?? [],
                priority: .immediate,
                expiration: expiration,
                collapseID: push.collapseID(identifier: message.identifier),
                apnsID: APNsNotification.copyID(msgID: message.msgID, deviceToken: token, pushType: .voip)
            )
        }
        guard let primaryToken else {
            // Only the VoIP token: the VoIP push is the copy's delivery.
            guard let voip else { return DeliveryUpdate(deviceID: target.deviceID, state: prepared.stored ? .waiting : .expired) }
            return await send(voip, client: client, route: route, target: target, attempts: attempts, prepared: prepared)
        }
        // The device's badge is part of the payload only when the push sets or changes it
        // (a retry or a taken-over job reads the device's badge whatever the push).
        let badge = push.notification?.ios?.badge == nil ? nil : target.badge
        let payload =
            badge.map { PushRendering.apnsPayload(push, msgID: message.msgID, badge: $0) }
            ?? (push.isLocalized || message.push.isLocalized ? PushRendering.apnsPayload(push, msgID: message.msgID) : prepared.apnsPayload)
        let pushType = APNsPushType(push.pushType)
        let notification = APNsNotification(
            deviceToken: primaryToken,
            pushType: pushType,
            payload: payload,
            priority: push.priority.flatMap(APNsPriority.init(rawValue:)),
            expiration: expiration,
            collapseID: push.collapseID(identifier: message.identifier),
            apnsID: APNsNotification.copyID(msgID: message.msgID, deviceToken: primaryToken, pushType: pushType)
        )
        guard let voip, attempts == 0 else {
            return await send(notification, client: client, route: route, target: target, attempts: attempts, prepared: prepared)
        }
        async let beside = sendBeside(voip, client: client, route: route, target: target, prepared: prepared)
        let update = await send(notification, client: client, route: route, target: target, attempts: attempts, prepared: prepared)
        await beside
        return update
    }

    /// Sends the VoIP push that goes beside a notification: its outcome is counted and, when
    /// it isn't delivered, logged; a VoIP token APNs no longer takes is removed from the
    /// device (its APNs token stays valid).
    private func sendBeside(
        _ voip: APNsNotification,
        client: APNsClient,
        route: APNsRoute,
        target: FanOutTarget,
        prepared: Prepared
    ) async {
        let appID = prepared.message.appID
        do {
            let outcome = try await client.send(voip)
            metrics.apnsOutcome(outcome)
            switch outcome {
            case .delivered: return
            case .invalidToken(let reason, _) where route.isWrongEnvironment(for: reason):
                logger.info(
                    "APNs did not take a VoIP push in the environment the push asked for; the token is kept",
                    metadata: ["herald.app_id": "\(appID)", "herald.environment": "\(route.environment.rawValue)"]
                )
                return
            case .invalidToken(let reason, let since):
                try? await store.apns.invalidateToken(
                    deviceID: target.deviceID,
                    token: voip.deviceToken,
                    since: since,
                    voip: true,
                    event: prepared.recordsEvents ? (prepared.message.id, reason.rawValue) : nil
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

    /// Sends a Live Activity push to the device's token for it (read with the batch): push
    /// type `liveactivity`, the topic's suffix follows from it, priority as asked.
    private func sendLiveActivity(_ prepared: Prepared, target: FanOutTarget, token: String?, attempts: Int) async -> DeliveryUpdate {
        let message = prepared.message
        let push = message.push
        guard let token, let payload = prepared.liveActivityPayload else {
            return DeliveryUpdate(deviceID: target.deviceID, state: .expired)
        }
        let route = APNsRoute(push: push, target: target)
        let environment = route.environment
        let client: APNsClient?
        do {
            client = try await apns.client(appID: message.appID, environment: environment)
        } catch {
            logger.error("APNs client unavailable", metadata: ["herald.app_id": "\(message.appID)", "error": "\(error)"])
            return retry(target, reason: Self.clientUnavailable, attempts: attempts, prepared: prepared, attempted: false)
        }
        guard let client else { return DeliveryUpdate(deviceID: target.deviceID, state: .expired) }
        let notification = APNsNotification(
            deviceToken: token,
            pushType: .liveactivity,
            payload: payload,
            priority: (push.liveActivity?.priority).flatMap(APNsPriority.init(rawValue:)),
            expiration: push.timeToLive == 0 ? Date(timeIntervalSince1970: 0) : message.expiresAt,
            apnsID: APNsNotification.copyID(msgID: message.msgID, deviceToken: token, pushType: .liveactivity)
        )
        return await send(notification, client: client, route: route, target: target, attempts: attempts, prepared: prepared)
    }

    /// Sends a copy's notification and says what became of the copy.
    private func send(
        _ notification: APNsNotification,
        client: APNsClient,
        route: APNsRoute,
        target: FanOutTarget,
        attempts: Int,
        prepared: Prepared
    ) async -> DeliveryUpdate {
        let message = prepared.message
        let token = notification.deviceToken
        let environment = route.environment
        do {
            let outcome = try await client.send(notification)
            metrics.apnsOutcome(outcome)
            switch outcome {
            case .delivered(let apnsID):
                return DeliveryUpdate(
                    deviceID: target.deviceID,
                    state: .apns,
                    apnsAttempted: true,
                    event: prepared.event(apnsID: apnsID, apnsStatus: 200)
                )
            case .invalidToken(let reason, _) where route.isWrongEnvironment(for: reason):
                // The push sent it where the device's token doesn't live: this push fails,
                // the token stays valid for the environment it was registered for.
                return DeliveryUpdate(
                    deviceID: target.deviceID,
                    state: .failed,
                    apnsReason: Self.wrongEnvironment,
                    apnsAttempted: true,
                    event: prepared.event(apnsID: notification.apnsID, apnsStatus: 400)
                )
            case .invalidToken(let reason, let since):
                try? await store.apns.invalidateToken(
                    deviceID: target.deviceID,
                    token: token,
                    since: since,
                    voip: notification.pushType == .voip,
                    event: prepared.recordsEvents ? (message.id, reason.rawValue) : nil
                )
                return DeliveryUpdate(
                    deviceID: target.deviceID,
                    state: .failed,
                    apnsReason: reason.rawValue,
                    apnsAttempted: true,
                    event: prepared.event(apnsID: notification.apnsID)
                )
            case .retryLater(let reason, let after):
                return retry(target, reason: reason.rawValue, attempts: attempts, prepared: prepared, after: after)
            case .circuitOpen(let reason, let after):
                // Nothing was sent: not an attempt.
                return retry(target, reason: reason.rawValue, attempts: attempts, prepared: prepared, after: after, attempted: false)
            case .credentialsBroken(let reason):
                await apns.credentialsRefused(by: client, appID: message.appID, environment: environment, reason: reason)
                return DeliveryUpdate(deviceID: target.deviceID, state: .failed, apnsReason: reason.rawValue, apnsAttempted: true)
            case .credentialsRefused(let reason):
                // Not sent: APNs refused the credentials on another copy, with Apple's reason.
                await apns.credentialsRefused(by: client, appID: message.appID, environment: environment, reason: reason)
                return DeliveryUpdate(deviceID: target.deviceID, state: .failed, apnsReason: Self.credentialsRefused)
            case .failed(let reason, let status):
                return DeliveryUpdate(
                    deviceID: target.deviceID,
                    state: .failed,
                    apnsReason: reason.rawValue,
                    apnsAttempted: true,
                    event: prepared.event(apnsID: notification.apnsID, apnsStatus: status)
                )
            }
        } catch let error as APNsError {
            metrics.apnsError(error)
            guard error.isRetryable else {
                return DeliveryUpdate(deviceID: target.deviceID, state: .failed, apnsReason: error.reason, apnsAttempted: false)
            }
            return retry(target, reason: error.reason, attempts: attempts, prepared: prepared)
        } catch is CancellationError {
            return retry(target, reason: APNsError.shutdown.reason, attempts: attempts, prepared: prepared, attempted: false)
        } catch {
            logger.warning("APNs send failed", metadata: ["herald.app_id": "\(message.appID)", "error": "\(error)"])
            return retry(target, reason: Self.internalError, attempts: attempts, prepared: prepared, attempted: false)
        }
    }

    /// The copy is kept, waiting for its next APNs attempt, for as long as its time to live
    /// lasts: after `after` (APNs' or the client's word), or the center's backoff (doubling
    /// per attempt up to ``CenterConfiguration/apnsMaxRetryDelay``, less up to a fifth at
    /// random so copies refused together don't come back together), whichever is longer.
    /// `attempted`: a request went to APNs (a refusal by the open circuit is none).
    func retry(
        _ target: FanOutTarget,
        reason: String,
        attempts: Int,
        prepared: Prepared,
        after: Duration? = nil,
        attempted: Bool = true
    ) -> DeliveryUpdate {
        let backoff = min(configuration.apnsRetryDelay * (1 << min(attempts, 20)), configuration.apnsMaxRetryDelay)
        let delay = max(after ?? .zero, backoff * (1 - 0.2 * Double.random(in: 0..<1)))
        let at = Date().addingTimeInterval(delay.timeInterval)
        guard at < prepared.message.expiresAt else {
            return DeliveryUpdate(deviceID: target.deviceID, state: .expired, apnsReason: reason, apnsAttempted: attempted)
        }
        return DeliveryUpdate(deviceID: target.deviceID, state: .waiting, apnsReason: reason, retryAt: at, apnsAttempted: attempted)
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
    init(push: Push, target: FanOutTarget) {
        self.init(apnsProduction: push.apnsProduction, deviceEnvironment: target.apnsEnvironment)
    }

    /// APNs' refusal says only that the token is not of the environment the push forced,
    /// not that the token is dead: JPush's clients send `apns_production: false` by
    /// default, and a production token must survive that.
    func isWrongEnvironment(for reason: APNsReason) -> Bool {
        isForcedElsewhere && reason == .badDeviceToken
    }
}

extension FanOutTarget {
    /// What the route planner reads of the copy's device.
    var facts: DeviceFacts {
        DeviceFacts(
            platform: platform,
            hasAPNsToken: apnsToken != nil,
            hasVoIPToken: voipToken != nil,
            hasFCMToken: fcmToken != nil,
            tokenValid: tokenValid,
            apnsEnvironment: apnsEnvironment,
            inBackground: inBackground
        )
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
