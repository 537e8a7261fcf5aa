/// The platform a device runs on.
public enum Platform: String, Sendable, Codable, CaseIterable {
    case ios, ipados, macos, tvos, watchos, visionos, android, linux, windows, web

    /// Apple platforms can hold APNs tokens.
    public var usesAPNs: Bool {
        switch self {
        case .ios, .ipados, .macos, .tvos, .watchos, .visionos: true
        case .android, .linux, .windows, .web: false
        }
    }
}

/// The APNs environment a token was issued for.
public enum APNsEnvironment: String, Sendable, Codable, CaseIterable {
    case production, sandbox
}
