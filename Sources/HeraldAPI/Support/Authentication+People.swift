import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird

/// People's sessions as credentials. Not cached (unlike keys): people send few requests,
/// and a sign-out, a confirmation or a role taken away must count from the next one.
extension Authentication {
    /// How long a confirmation of the password lets a person take destructive actions.
    static let confirmationWindow: TimeInterval = 5 * 60

    /// The enabled person whose password this is; 401 otherwise, after as long a check (an
    /// unknown email costs the same scrypt).
    func person(email: String, password: String) async throws -> Person {
        let stored = try await store.people.passwordHash(email: email)
        let matches = try await PasswordHashing.verify(password, stored: stored?.hash)
        guard matches, let stored, let person = try await store.people.user(id: stored.userID) else {
            throw HeraldError(.unauthorized, "wrong email or password")
        }
        return person
    }

    /// The console's signed-in person, from the session cookie; nil when there is none or
    /// it ended (the page sends them to sign in).
    func consoleSession(_ request: Request) async throws -> ConsoleSession? {
        let serving = try Self.serving(admitting: { $0 == .console })
        guard let token = ConsoleSession.token(in: request), APIKeyText.id(of: token, prefix: APIKeyText.sessionPrefix) != nil,
            let (session, person) = try await store.people.authenticateSession(token: token)
        else { return nil }
        let signedIn = SignedIn(person: person, session: session)
        serving.audit?.identify(actor: signedIn.actor, appID: nil)
        return ConsoleSession(signedIn: signedIn, token: token)
    }

    /// Requires a person's own session (`Bearer hks_…`), on a route for people.
    func requirePerson(_ request: Request) async throws -> SignedIn {
        let serving = try Self.serving(admitting: { $0 == .person })
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
            case let token = String(header.dropFirst("Bearer ".count)),
            APIKeyText.id(of: token, prefix: APIKeyText.sessionPrefix) != nil
        else {
            throw HeraldError(.unauthorized, "Authorization: expected Bearer with a session token (POST /auth/v1/sessions)")
        }
        return try await signedIn(token: token, header: header, serving)
    }

    /// The live session `token` opens, its person named in the audit entry.
    func signedIn(token: String, header: String, _ serving: RouteAccess.Serving) async throws -> SignedIn {
        guard let (session, person) = try await store.people.authenticateSession(token: token) else {
            throw HeraldError(.unauthorized, "Authorization: the session ended or never was; sign in again")
        }
        let signedIn = SignedIn(person: person, session: session)
        serving.audit?.identify(actor: signedIn.actor, appID: nil)
        verified.record(header)
        return signedIn
    }

    /// A person acting on an app (Basic `app_key:hks_…`): their role there must hold the
    /// route's scope.
    func personCaller(appKey: String, token: String, header: String, _ serving: RouteAccess.Serving) async throws -> AppCaller {
        let signedIn = try await signedIn(token: token, header: header, serving)
        guard let app = try await store.app(appKey: appKey) else {
            throw HeraldError(.forbidden, "\(signedIn.actor) has no role on app \(appKey)")
        }
        serving.audit?.identify(actor: signedIn.actor, appID: app.id)
        let caller = AppCaller(app: app, key: nil, signedIn: signedIn)
        guard let role = signedIn.person.role(onApp: appKey) else {
            throw HeraldError(.forbidden, "\(signedIn.actor) has no role on app \(appKey)")
        }
        if let scope = serving.access.scope, !role.scopes.grants(scope) {
            throw HeraldError(.forbidden, "\(signedIn.actor) (\(role.rawValue)) lacks the scope \(scope.needed)")
        }
        try Self.checkConfirmation(signedIn, serving)
        return caller
    }

    /// Refuses a destructive route to a person whose password was not confirmed lately.
    static func checkConfirmation(_ signedIn: SignedIn, _ serving: RouteAccess.Serving) throws {
        if serving.confirm { try requireConfirmation(signedIn) }
    }

    /// Refuses a person whose password was not confirmed within ``confirmationWindow``
    /// (a route's destructive case: a push to every device).
    static func requireConfirmation(_ signedIn: SignedIn?) throws {
        guard let signedIn, signedIn.session.confirmedAt.addingTimeInterval(confirmationWindow) < Date() else { return }
        throw HeraldError(
            .confirmationRequired,
            "this action needs your password again: POST /auth/v1/session/confirm, then retry (confirmations last 5 minutes)"
        )
    }
}
