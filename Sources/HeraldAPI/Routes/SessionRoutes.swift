import Foundation
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// `/auth/v1/…`: a person signs in (Basic `email:password`, throttled as every credential
/// is by ``AuthThrottleMiddleware``), reads who they are, confirms their password before a
/// destructive action, and signs out. The session's token (`hks_…`) is then their
/// credentials: Basic `app_key:hks_…` on an app's routes, `Bearer hks_…` on the admin
/// API and here.
struct SessionRoutes {
    let store: APIStore
    let auth: Authentication
    let body: JSONBody
    let lifetime: Duration
    let logger = Logger(label: "herald.api.people")

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/auth/v1/sessions", access: .signIn, use: signIn)
        routes.on(.get, "/auth/v1/session", access: .person, use: show)
        routes.on(.delete, "/auth/v1/session", access: .person, use: signOut)
        routes.on(.post, "/auth/v1/session/confirm", access: .person, use: confirm)
    }

    /// Opens a session for `Authorization: Basic email:password`. A wrong password and an
    /// unknown email take as long and answer the same 401.
    @Sendable func signIn(_ request: Request, context: HeraldRequestContext) async throws -> EditedResponse<OpenedSessionBody> {
        guard let header = request.headers[.authorization], let credentials = BasicCredentials(authorization: header) else {
            throw HeraldError(.unauthorized, "Authorization: expected Basic email:password")
        }
        let email = credentials.user.lowercased()
        RouteAccess.serving?.audit?.identify(actor: "user:\(email.prefix(254))", appID: nil)
        let person = try await auth.person(email: email, password: credentials.password)
        auth.verified.record(header)
        let address = RouteAccess.serving?.remoteAddress?.description
        let opened = try await store.people.openSession(userID: person.id, method: "password", lifetime: lifetime, address: address)
        logger.info("signed in", metadata: ["herald.user": "\(email)", "herald.session": "\(opened.session.sessionID)"])
        return EditedResponse(status: .created, response: OpenedSessionBody(opened, person))
    }

    @Sendable func show(_ request: Request, context: HeraldRequestContext) async throws -> SessionBody {
        let signedIn = try await auth.requirePerson(request)
        return SessionBody(signedIn.session, signedIn.person)
    }

    @Sendable func signOut(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let signedIn = try await auth.requirePerson(request)
        _ = try await store.people.revokeSession(signedIn.session.sessionID)
        return Response(status: .noContent)
    }

    /// `{"password"}`: the person proves it is them again; destructive actions are allowed
    /// for ``Authentication/confirmationWindow``.
    @Sendable func confirm(_ request: Request, context: HeraldRequestContext) async throws -> SessionBody {
        let signedIn = try await auth.requirePerson(request)
        let input = try await body.decode(PasswordBody.self, from: request)
        _ = try await auth.person(email: signedIn.person.email, password: input.password)
        guard let session = try await store.people.confirmSession(signedIn.session.sessionID) else {
            throw HeraldError(.unauthorized, "Authorization: the session ended; sign in again")
        }
        return SessionBody(session, signedIn.person)
    }
}

/// `{"password"}`.
struct PasswordBody: Decodable {
    var password: String

    enum CodingKeys: String, CodingKey, CaseIterable { case password }

    init(from decoder: any Decoder) throws {
        password = try decoder.strictContainer(keyedBy: CodingKeys.self).decode(String.self, forKey: .password)
    }
}

/// A person as the API shows them.
struct PersonBody: ResponseEncodable {
    var email: String
    var name: String
    var instanceRole: String?
    /// App key → role.
    var appRoles: [String: String]
    var hasPassword: Bool
    var oidc: Bool
    var createdAt: Date
    var disabled: Bool

    init(_ person: Person) {
        email = person.email
        name = person.name
        instanceRole = person.instanceRole?.rawValue
        appRoles = person.appRoles.mapValues(\.rawValue)
        hasPassword = person.hasPassword
        oidc = person.oidcSubject != nil
        createdAt = person.createdAt
        disabled = person.disabledAt != nil
    }

    enum CodingKeys: String, CodingKey { case email, name, instanceRole, appRoles, hasPassword, oidc, createdAt, disabled }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(email, forKey: .email)
        try container.encode(name, forKey: .name)
        try container.encode(instanceRole, forKey: .instanceRole)
        try container.encode(appRoles, forKey: .appRoles)
        try container.encode(hasPassword, forKey: .hasPassword)
        try container.encode(oidc, forKey: .oidc)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(disabled, forKey: .disabled)
    }
}

/// A session and its person (never its token).
struct SessionBody: ResponseEncodable {
    var sessionId: String
    var method: String
    var createdAt: Date
    var expiresAt: Date
    var confirmedAt: Date
    var user: PersonBody

    init(_ session: PersonSession, _ person: Person) {
        sessionId = session.sessionID
        method = session.method
        createdAt = session.createdAt
        expiresAt = session.expiresAt
        confirmedAt = session.confirmedAt
        user = PersonBody(person)
    }
}

/// A session just opened, with its token: shown this once.
struct OpenedSessionBody: ResponseEncodable {
    var token: String
    var session: SessionBody

    init(_ opened: OpenedSession, _ person: Person) {
        token = opened.token
        session = SessionBody(opened.session, person)
    }
}
