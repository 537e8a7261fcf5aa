import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// `/auth/v1/oidc/…`: signing in through the configured OpenID Connect provider, the
/// authorization code flow with PKCE (S256), a nonce and a one-time state kept in
/// PostgreSQL (any node takes the callback). The provider's verified identity opens a
/// session of the Herald user bound to it; the first time, the user whose email the
/// provider verified, which an admin created beforehand (`heraldctl users create … --oidc-only`).
/// Nobody gets in whom an admin didn't add.
struct OIDCRoutes {
    let store: APIStore
    let provider: OIDCProvider?
    let lifetime: Duration
    let logger = Logger(label: "herald.api.oidc")

    /// How long a sign-in may take at the provider.
    static let signInWindow: Duration = .seconds(600)

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/auth/v1/oidc/start", access: .signIn, use: start)
        routes.on(.get, "/auth/v1/oidc/callback", access: .signIn, use: callback)
    }

    /// Sends the browser to the provider (302), or with `?mode=json` answers
    /// `{"authorization_url"}`. With `?console=1` (the console's sign-in page), the callback
    /// signs the browser in to the console.
    @Sendable func start(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let provider = try configured()
        let state = RandomToken.hex(byteCount: 24)
        let nonce = RandomToken.hex(byteCount: 24)
        let verifier = RandomToken.hex(byteCount: 32)
        let url = try await provider.authorizationURL(state: state, nonce: nonce, codeChallenge: PKCE.challenge(of: verifier))
        let console = request.uri.queryParameters.get("console") == "1"
        try await store.people.startOIDCSignIn(state: state, nonce: nonce, codeVerifier: verifier, console: console)
        if request.uri.queryParameters.get("mode") == "json" {
            return try AuthorizationURLBody(authorizationUrl: url).response(from: request, context: context)
        }
        return Response(status: .found, headers: [.location: url, .cacheControl: "no-store"])
    }

    /// The provider sent the browser back: the code exchanged, the ID token verified, a
    /// session opened (201, as a password sign-in answers); for a sign-in started from the
    /// console, its cookie set and the browser sent to the console (303).
    @Sendable func callback(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let provider = try configured()
        let query = request.uri.queryParameters
        if let error = query.get("error") {
            throw OIDCProvider.failure("the provider answered \(error.prefix(100))")
        }
        guard let state = query.get("state"), let code = query.get("code"), state.utf8.count <= 256, code.utf8.count <= 4096 else {
            throw HeraldError(.unauthorized, "sign-in through the provider failed: the callback has no code or state")
        }
        guard let started = try await store.people.takeOIDCSignIn(state: state, within: Self.signInWindow) else {
            throw OIDCProvider.failure("no sign-in under way with this state (expired, or used already)")
        }
        let claims = try await provider.claims(code: code, codeVerifier: started.codeVerifier, nonce: started.nonce)
        RouteAccess.serving?.audit?.identify(actor: "user:\(claims.email ?? claims.identity)", appID: nil)
        let person = try await user(for: claims)
        let address = RouteAccess.serving?.remoteAddress?.description
        let opened = try await store.people.openSession(userID: person.id, method: "oidc", lifetime: lifetime, address: address)
        logger.info("signed in through OpenID Connect", metadata: ["herald.user": "\(person.email)"])
        if started.console {
            return ConsolePages.redirect(
                to: "/console",
                cookie: ConsoleSession.cookie(opened.token, lifetime: lifetime, secure: ConsoleSession.isSecure(request))
            )
        }
        return try EditedResponse(status: .created, response: OpenedSessionBody(opened, person)).response(from: request, context: context)
    }

    /// The user bound to the identity; or, the first time, the user with the email the
    /// provider verified, then bound.
    private func user(for claims: IDTokenClaims) async throws -> Person {
        if let bound = try await store.people.user(oidcSubject: claims.identity) {
            guard bound.disabledAt == nil else { throw HeraldError(.unauthorized, "user \(bound.email) is disabled") }
            return bound
        }
        guard let email = claims.email, claims.emailVerified else {
            throw HeraldError(.forbidden, "the provider did not verify an email for this identity; Herald has no user for it")
        }
        guard let person = try await store.people.user(email: email) else {
            throw HeraldError(.forbidden, "no Herald user \(email): an admin adds one (heraldctl users create \(email) --oidc-only)")
        }
        guard person.disabledAt == nil else { throw HeraldError(.unauthorized, "user \(email) is disabled") }
        guard person.oidcSubject == nil else {
            throw HeraldError(.forbidden, "user \(email) is bound to another identity of the provider")
        }
        try await store.people.bind(oidcSubject: claims.identity, userID: person.id)
        return try await store.people.user(id: person.id) ?? person
    }

    private func configured() throws -> OIDCProvider {
        guard let provider else {
            throw HeraldError(.routeNotFound, "no OpenID Connect provider is configured (oidc.issuer)")
        }
        return provider
    }
}

struct AuthorizationURLBody: ResponseEncodable {
    var authorizationUrl: String
}
