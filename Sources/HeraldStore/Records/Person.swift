import Foundation
import HeraldCore

/// A console user as operators see them (never the password's hash).
public struct Person: Sendable, Hashable {
    public var id: Int64
    /// Lower-cased.
    public var email: String
    public var name: String
    /// Their role over every app, if any.
    public var instanceRole: Role?
    /// Their role per app (app key → role).
    public var appRoles: [String: Role]
    /// Whether they may sign in with a password (else through OpenID Connect only).
    public var hasPassword: Bool
    /// The OpenID Connect identity bound to them (issuer, a space, subject).
    public var oidcSubject: String?
    public var createdAt: Date
    public var disabledAt: Date?

    /// Their role on the app: the higher of the instance's and the app's.
    public func role(onApp appKey: String) -> Role? {
        [instanceRole, appRoles[appKey]].compactMap { $0 }.max()
    }

    /// Whether they administer the whole instance (the admin API).
    public var isInstanceAdmin: Bool { instanceRole == .admin }
}

/// A signed-in session of a person's.
public struct PersonSession: Sendable, Hashable {
    /// The public half of the token (`hks_…`): what lists and the audit name.
    public var sessionID: String
    public var userID: Int64
    /// `password` or `oidc`.
    public var method: String
    public var createdAt: Date
    public var expiresAt: Date
    /// When the person last proved it was them: sign-in, or the password again.
    public var confirmedAt: Date
    public var address: String?
    public var revokedAt: Date?
}

/// A session just opened: the only time its token exists in clear.
public struct OpenedSession: Sendable {
    public var session: PersonSession
    public var token: String
}

/// What a new console user is to be.
public struct PersonSpec: Sendable, Hashable {
    public var email: String
    public var name: String
    /// The password's stored hash (``PasswordHash``); nil: OpenID Connect only.
    public var passwordHash: String?
    public var instanceRole: Role?
    public var oidcSubject: String?

    public init(email: String, name: String = "", passwordHash: String?, instanceRole: Role?, oidcSubject: String? = nil) {
        self.email = email.lowercased()
        self.name = name
        self.passwordHash = passwordHash
        self.instanceRole = instanceRole
        self.oidcSubject = oidcSubject
    }
}

/// A push waiting for a second person (the two-person rule).
public struct PushApproval: Sendable, Hashable {
    public enum State: String, Sendable, Hashable {
        case pending, approved, rejected, expired
    }

    public var id: Int64
    public var appID: Int64
    /// The `/v3/push` body exactly as composed.
    public var body: [UInt8]
    public var audienceSize: Int64
    /// Who composed it, as the audit log names them.
    public var composer: String
    /// The person who composed it (nil: a key did).
    public var composerUserID: Int64?
    public var composedAt: Date
    public var state: State
    public var decider: String?
    public var decidedAt: Date?
    public var expiresAt: Date
    /// The message it sent, once approved and accepted.
    public var msgID: String?

    /// The cid its push is accepted under: approving twice sends it once.
    public var cid: String { "herald-approval-\(id)" }
}
