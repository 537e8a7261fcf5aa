/// What an APNs answer means for whoever set the credentials and the token up, in a
/// sentence that says what to check: `heraldctl apns send` prints it under Apple's answer,
/// and a device's diagnosis under its last APNs failure.
public enum APNsAdvice {
    /// Herald's reason for a copy APNs refused with BadDeviceToken in the environment its
    /// push asked for (`apns_production`) rather than its device's own: that push fails,
    /// the token is kept.
    public static let wrongEnvironment = "WrongEnvironment"

    /// The advice for Apple's `reason` (nil for a 200), sent to `environment` (for
    /// ``wrongEnvironment``, the device's own).
    public static func explain(reason: String?, environment: APNsEnvironment?) -> String {
        let other = environment.map { $0 == .sandbox ? "production" : "sandbox" } ?? "the other environment"
        switch reason {
        case nil:
            return "APNs accepted the notification. If the device shows nothing, check that the app asked for permission and isn't in Focus."
        case "BadDeviceToken":
            return """
                APNs does not know this token in \(environment?.rawValue ?? "this environment"). A token from a build run from Xcode \
                is a sandbox token; one from TestFlight or the App Store is a production token: try \(other). A token is 64 hex \
                characters (32 bytes) as the app got it from didRegisterForRemoteNotificationsWithDeviceToken.
                """
        case wrongEnvironment:
            let token = environment.map { "\($0.rawValue) token" } ?? "token"
            return """
                Wrong environment for this token: the push asked for the other APNs environment (apns_production) than the \
                device's \(token), and APNs does not know the token there. Only that push failed: the token was kept. JPush's \
                clients send apns_production false by default: set it to true for TestFlight and App Store builds, or leave it \
                out so each copy goes to its device's own environment.
                """
        case "DeviceTokenNotForTopic":
            return "The token belongs to another app: the topic must be the bundle id of the app that registered the token."
        case "Unregistered", "ExpiredToken":
            return
                "The app was uninstalled or turned notifications off for good; the token is dead since the time shown. Wait for the app to register a new one."
        case "BadTopic", "TopicDisallowed", "MissingTopic":
            return
                "The topic is not one these credentials may push to: it must be the app's bundle id (with .voip for VoIP, .push-type.liveactivity for Live Activities)."
        case "InvalidProviderToken", "MissingProviderToken":
            return
                "APNs refused the key: the key id, the team id and the .p8 file must belong together, and the key must have the APNs service enabled in the developer account."
        case "ExpiredProviderToken":
            return "The signed token was older than an hour: the clock of this machine is probably wrong."
        case "BadEnvironmentKeyIdInToken":
            return "The key is restricted to one environment, not \(environment?.rawValue ?? "this one"): try \(other), or a key for both."
        case "BadCertificate", "BadCertificateEnvironment":
            return
                "APNs refused the certificate: it must be an APNs certificate of this app, for \(environment?.rawValue ?? "this environment") (a development certificate is sandbox only), not expired or revoked."
        case "Forbidden":
            return "APNs refused the credentials for this request: check the key or certificate and the team they belong to."
        case "PayloadTooLarge":
            return "The payload is over 4096 bytes (5120 for VoIP): shorten the text or move data to extras the app fetches."
        case "BadPriority":
            return "This push type does not allow this priority: background pushes must go at priority 5."
        case "InvalidPushType":
            return "The push type is not one APNs knows."
        case "TooManyRequests", "TooManyProviderTokenUpdates":
            return "APNs is throttling: too many pushes to this device, or the signing key changed too often. Wait and retry."
        case "InternalServerError", "ServiceUnavailable", "Shutdown":
            return "APNs had a problem of its own: retry in a moment."
        case "CredentialsRefused":
            return
                "Not sent: APNs had refused the app's credentials (the app's APNs problem says why); nothing goes to APNs for the app until working credentials are uploaded."
        case .some(let other):
            return "APNs refused it with \(other); see Apple's table of reasons."
        }
    }
}
