/// What a person may do, for one app or for the whole instance: each role holds the one
/// below it and more.
public enum Role: String, Sendable, Hashable, CaseIterable, Codable, Comparable {
    /// Reads devices, reports and message history.
    case viewer
    /// A viewer who composes pushes: each waits for an operator's or admin's approval.
    case author
    /// Sends, recalls, schedules; changes devices, categories and the event stream.
    case `operator`
    /// Everything, the app's settings, keys, people and audit log included; an instance
    /// admin also creates and deletes apps and manages people.
    case admin

    /// The scopes the role holds on an app.
    public var scopes: Set<Scope> {
        switch self {
        case .viewer: [.devicesRead, .reportsRead]
        case .author: Role.viewer.scopes.union([.compose])
        case .operator:
            Role.author.scopes.union([.send, .recall, .devicesWrite, .schedules, .categories, .events])
        case .admin: Set(Scope.allCases)
        }
    }

    /// Whether the role may approve another person's push.
    public var approves: Bool { self >= .operator }

    public static func < (lhs: Role, rhs: Role) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
