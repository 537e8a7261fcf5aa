/// `apns-push-type`: always sent. Decides the topic suffix and the payload limit.
public enum APNsPushType: String, Sendable, Hashable, CaseIterable {
    case alert, background, voip, complication, fileprovider, mdm, liveactivity, location, pushtotalk, widgets, controls

    /// What Apple expects after the bundle id in `apns-topic`.
    public var topicSuffix: String {
        switch self {
        case .voip: ".voip"
        case .complication: ".complication"
        case .fileprovider: ".pushkit.fileprovider"
        case .liveactivity: ".push-type.liveactivity"
        case .location: ".location-query"
        case .pushtotalk: ".voip-ptt"
        case .alert, .background, .mdm, .widgets, .controls: ""
        }
    }

    /// The largest payload APNs accepts for this type, in bytes.
    public var payloadLimit: Int {
        self == .voip ? 5120 : 4096
    }
}

/// `apns-priority`.
public enum APNsPriority: Int, Sendable, Hashable {
    /// Send now.
    case immediate = 10
    /// Send when power allows; required for background pushes.
    case powerConsiderate = 5
    /// Low: may be grouped and delayed.
    case low = 1
}
