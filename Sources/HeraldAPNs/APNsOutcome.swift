import Foundation

/// What the caller should do after a send: the action for APNs' answer (apns.md's table).
public enum APNsOutcome: Sendable, Hashable {
    /// APNs accepted the notification.
    case delivered(apnsID: UUID)
    /// Stop sending to this token. With Unregistered, `since` is when it stopped being
    /// valid: a device that registers again after it is valid again.
    case invalidToken(reason: APNsReason, since: Date?)
    /// A transient refusal, or transient failures on every attempt: try again after `after`.
    case retryLater(reason: APNsReason, after: Duration)
    /// APNs kept failing (5xx) and the client's circuit is open: nothing was sent. Try
    /// again after `after`; `reason` is APNs' last 5xx reason.
    case circuitOpen(reason: APNsReason, after: Duration)
    /// APNs refused the app's credentials in its answer to this notification: the client
    /// stopped sending for this app (see ``APNsClient/credentialsProblem``).
    case credentialsBroken(reason: APNsReason)
    /// APNs refused the app's credentials earlier (`reason`, its answer then): this
    /// notification was not sent.
    case credentialsRefused(reason: APNsReason)
    /// The message can't be delivered as it is: fail it with Apple's reason.
    case failed(reason: APNsReason, status: Int)
}

/// What a single APNs answer means for the request that got it.
enum APNsResponseAction: Sendable, Hashable {
    case outcome(APNsOutcome)
    /// Retry on another connection (after a backoff). `refreshToken`: the token expired.
    /// `retireConnection`: don't use this connection again.
    case retryElsewhere(reason: APNsReason, refreshToken: Bool, retireConnection: Bool)
}

/// Maps APNs' answers to actions (apns.md, "Responses").
enum APNsResponseClassifier {
    static func classify(status: Int, reason: APNsReason?, timestamp: Date?, apnsID: UUID) -> APNsResponseAction {
        if status == 200 { return .outcome(.delivered(apnsID: apnsID)) }
        let reason = reason ?? .unknown("HTTP \(status)")
        switch (status, reason) {
        case (_, .badDeviceToken):
            return .outcome(.invalidToken(reason: reason, since: nil))
        case (_, .unregistered), (_, .expiredToken), (410, _):
            return .outcome(.invalidToken(reason: reason, since: timestamp))
        case (_, .idleTimeout):
            return .retryElsewhere(reason: reason, refreshToken: false, retireConnection: true)
        case (_, .expiredProviderToken):
            return .retryElsewhere(reason: reason, refreshToken: true, retireConnection: true)
        case (_, .unrelatedKeyIdInToken):
            return .retryElsewhere(reason: reason, refreshToken: false, retireConnection: true)
        case (_, .invalidProviderToken), (_, .missingProviderToken), (_, .badCertificate), (_, .badCertificateEnvironment),
            (_, .badEnvironmentKeyIdInToken), (_, .forbidden):
            return .outcome(.credentialsBroken(reason: reason))
        case (_, .tooManyProviderTokenUpdates):
            return .outcome(.retryLater(reason: reason, after: .seconds(60)))
        case (_, .tooManyRequests):
            return .outcome(.retryLater(reason: reason, after: .seconds(30)))
        case (_, .shutdown):
            return .retryElsewhere(reason: reason, refreshToken: false, retireConnection: true)
        case (500...599, _):
            return .retryElsewhere(reason: reason, refreshToken: false, retireConnection: false)
        case (429, _):
            return .outcome(.retryLater(reason: reason, after: .seconds(30)))
        default:
            return .outcome(.failed(reason: reason, status: status))
        }
    }
}
