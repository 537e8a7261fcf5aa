/// The platform a device runs on.
public enum Platform: String, Sendable, Codable, CaseIterable {
    case ios, ipados, macos, tvos, watchos, visionos, android, linux, windows, web
    /// HarmonyOS NEXT: its devices reach Herald over the long connection only (Herald has no
    /// HarmonyOS push channel).
    case hmos
    /// Quick apps (快应用) on Android phones, over the long connection only.
    case quickapp

    /// Apple platforms can hold APNs tokens.
    public var usesAPNs: Bool {
        switch self {
        case .ios, .ipados, .macos, .tvos, .watchos, .visionos: true
        case .android, .linux, .windows, .web, .hmos, .quickapp: false
        }
    }
}

extension Platform {
    /// The platforms a name in JPush's `platform` stands for (a push's `platform`, the
    /// `?platform=` of the alias and tag routes): JPush's `ios` is every platform APNs
    /// serves; Herald's own names stand for themselves. Nil for a name that is neither.
    public static func named(jpush name: String) -> [Platform]? {
        if name == "ios" { return allCases.filter(\.usesAPNs) }
        return Platform(rawValue: name).map { [$0] }
    }
}

/// The APNs environment a token was issued for.
public enum APNsEnvironment: String, Sendable, Codable, CaseIterable {
    case production, sandbox
}
