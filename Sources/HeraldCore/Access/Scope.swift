/// What an API key may do. Every route declares the one it needs (``RouteAccess`` in
/// HeraldAPI); the app's master secret, while it is enabled, holds them all.
public enum Scope: String, Sendable, Hashable, CaseIterable, Codable, Comparable {
    /// Push, validate, batch push, and category deliveries.
    case send
    /// Compose a push for another person's approval, and validate it (the two-person
    /// rule: an author's role, or a key that drafts what people approve).
    case compose
    /// Recall and replace what was sent.
    case recall
    /// Read devices, aliases, tags and their presence.
    case devicesRead = "devices:read"
    /// Change and delete devices, aliases and tags; import devices.
    case devicesWrite = "devices:write"
    case schedules
    case categories
    /// Delivery reports, message history, timelines and diagnoses.
    case reportsRead = "reports:read"
    /// The event stream.
    case events
    /// The app's own settings.
    case settings
    /// Create, rotate and revoke the app's keys (never a scope the creating key lacks).
    case keys
    /// Read the app's audit log.
    case auditRead = "audit:read"

    /// How a refusal names the scope a route needs: `compose` is what `POST /v3/push`
    /// declares, but a caller lacking it is missing `send` first.
    public var needed: String {
        self == .compose ? "send (or compose, to draft pushes for approval)" : rawValue
    }

    public static func < (lhs: Scope, rhs: Scope) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

extension Set<Scope> {
    /// Whether these scopes admit what `scope` allows: the scope itself, or one that holds
    /// it (`send` holds `compose`: who may send may compose what they send).
    public func grants(_ scope: Scope) -> Bool {
        contains(scope) || (scope == .compose && contains(.send))
    }
}
