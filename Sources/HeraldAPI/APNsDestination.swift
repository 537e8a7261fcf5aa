/// Where this server sends APNs traffic: what an app's uploaded Apple credentials are for.
public enum APNsDestination: String, Sendable, Hashable {
    /// Apple's servers, with each app's own credentials.
    case apple
    /// The local APNs sandbox `herald serve` started (`HERALD_APNS_SANDBOX`): uploaded
    /// credentials are kept but not used, and nothing reaches a real device.
    case sandbox

    /// What an operator looking at an app's credentials needs to know, if anything.
    var credentialsNote: String? {
        switch self {
        case .apple:
            nil
        case .sandbox:
            "this server sends APNs traffic to its local APNs sandbox, not to Apple: these credentials are not used and nothing reaches a real device; set HERALD_APNS_SANDBOX=off to send to Apple"
        }
    }
}
