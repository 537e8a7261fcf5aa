import AsyncHTTPClient
import Foundation
import HeraldAPI
import HeraldCore
import HeraldTestSupport
import Testing

/// Signing in through an OpenID Connect provider (issue #30), against a small fake provider
/// on loopback: the code flow with PKCE; the identity bound to the Herald user an admin
/// created; and every way a provider's answer can be wrong refused.
@Suite struct OIDCSignInTests {
    static let redirect = "http://herald.test/auth/v1/oidc/callback"

    /// Starts a sign-in at Herald, signs in at the provider as `email`, and returns the
    /// callback's query (code and state) as the provider sent the browser back with it.
    static func authorize(_ api: APITest, as email: String, subject: String? = nil, console: Bool = false) async throws -> String {
        let started = try await api.send(.get, "/auth/v1/oidc/start?mode=json" + (console ? "&console=1" : ""))
        #expect(started.status == 200, "\(started.body)")
        var url = try started.string("authorization_url")
        #expect(url.contains("code_challenge_method=S256") && url.contains("nonce=") && url.contains("client_id=\(FakeOIDCProvider.clientID)"))
        url += "&login_as=\(email.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? email)"
        if let subject { url += "&subject=\(subject)" }
        let client = HTTPClient(configuration: .init(redirectConfiguration: .disallow))
        defer { _ = client.shutdown() }
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
        #expect(response.status.code == 302)
        let location = try #require(response.headers.first(name: "location"))
        #expect(location.hasPrefix(redirect + "?"))
        return String(location.dropFirst(redirect.count + 1))
    }

    static func withProvider(_ body: @Sendable @escaping (APITest, FakeOIDCProvider) async throws -> Void) async throws {
        try await FakeOIDCProvider.run { provider in
            let issuer = provider.issuer
            try await APITest.live({ configuration, _ in
                configuration.oidc = OIDCConfiguration(
                    issuer: issuer,
                    clientID: FakeOIDCProvider.clientID,
                    clientSecret: FakeOIDCProvider.clientSecret,
                    redirectURL: redirect
                )
            }) { api, _ in
                try await body(api, provider)
            }
        }
    }

    @Test func aPersonAnAdminAddedSignsInThroughTheProvider() async throws {
        try await Self.withProvider { api, provider in
            let app = try await api.createApp()
            let created = try await api.send(.post, "/admin/v1/users", auth: .admin, json: #"{"email": "sso@example.com"}"#)
            let hasPassword = try created.json["has_password"] as? Bool
            #expect(created.status == 201 && hasPassword == false, "\(created.body)")
            #expect(
                try await api.send(.put, "/admin/v1/users/sso@example.com/apps/\(app.appKey)", auth: .admin, json: #"{"role": "viewer"}"#).status
                    == 200
            )

            let callback = try await Self.authorize(api, as: "SSO@example.com", subject: "sso-subject")
            let signedIn = try await api.send(.get, "/auth/v1/oidc/callback?\(callback)")
            #expect(signedIn.status == 201, "\(signedIn.body)")
            let token = try signedIn.string("token")
            #expect(try await api.send(.get, "/v3/keys", auth: .basic(app.appKey, token)).status == 403)  // a viewer
            let me = try await api.send(.get, "/auth/v1/session", auth: .bearer(token))
            let user = try me.json["user"] as? [String: Any]
            let method = try me.json["method"] as? String
            #expect(user?["oidc"] as? Bool == true && method == "oidc", "\(me.body)")
            // The callback once only.
            let replayed = try await api.send(.get, "/auth/v1/oidc/callback?\(callback)")
            #expect(replayed.status == 401, "\(replayed.body)")
            #expect(provider.state.withLockedValue { $0.tokenRequests } == 1)
            // Bound by the identity: the provider may change the email, the same person signs in.
            let again = try await Self.authorize(api, as: "renamed@example.com", subject: "sso-subject")
            #expect(try await api.send(.get, "/auth/v1/oidc/callback?\(again)").status == 201)
            // From the console's sign-in page: the console's cookie, and on to the console.
            let fromConsole = try await Self.authorize(api, as: "renamed@example.com", subject: "sso-subject", console: true)
            let console = try await api.send(.get, "/auth/v1/oidc/callback?\(fromConsole)")
            #expect(console.status == 303 && console.headers[.location] == "/console", "\(console.body)")
            let cookie = try #require(console.headers[.setCookie]?.split(separator: ";").first.map(String.init))
            #expect(cookie.hasPrefix("herald_session=hks_") && console.headers[.setCookie]?.contains("HttpOnly") == true)
            let home = try await api.send(.get, "/console", headers: [.cookie: cookie])
            #expect(home.status == 200 && home.body.contains(app.appKey), "\(home.body)")
            // Audited.
            let audit = try await api.send(.get, "/admin/v1/audit?action=GET%20/auth/v1/oidc/callback", auth: .admin)
            let entries = try audit.json["entries"] as? [[String: Any]] ?? []
            #expect(entries.map { $0["status"] as? Int } == [201, 401, 201, 303], "\(audit.body)")
        }
    }

    @Test func whatAProviderMustNotDoIsRefused() async throws {
        try await Self.withProvider { api, provider in
            try await api.send(.post, "/admin/v1/users", auth: .admin, json: #"{"email": "sso@example.com", "instance_role": "admin"}"#)
            let cases: [(FakeOIDCProvider.Misbehaviour, Int, String)] = [
                (.foreignKey, 401, "signature"),
                (.wrongNonce, 401, "nonce"),
                (.wrongAudience, 401, "another client"),
                (.expired, 401, "expired"),
                (.unsigned, 401, "none"),
                (.unverifiedEmail, 403, "did not verify"),
            ]
            for (misbehave, status, reason) in cases {
                provider.misbehave = misbehave
                let callback = try await Self.authorize(api, as: "sso@example.com")
                let refused = try await api.send(.get, "/auth/v1/oidc/callback?\(callback)")
                #expect(refused.status == status && refused.errorMessage?.contains(reason) == true, "\(misbehave): \(refused.body)")
            }
            provider.misbehave = .none
            // Nobody an admin didn't add.
            let stranger = try await Self.authorize(api, as: "stranger@example.com")
            let refused = try await api.send(.get, "/auth/v1/oidc/callback?\(stranger)")
            #expect(refused.status == 403 && refused.errorMessage?.contains("no Herald user") == true, "\(refused.body)")
            // A state Herald never issued, a provider's error.
            #expect(try await api.send(.get, "/auth/v1/oidc/callback?code=x&state=forged").status == 401)
            #expect(try await api.send(.get, "/auth/v1/oidc/callback?error=access_denied&state=x").status == 401)
            // Nothing bound, no session: the right answer still signs in.
            let callback = try await Self.authorize(api, as: "sso@example.com")
            #expect(try await api.send(.get, "/auth/v1/oidc/callback?\(callback)").status == 201)
        }
    }

    @Test func withoutAProviderTheRoutesSaySo() async throws {
        try await APITest.run { api in
            let reply = try await api.send(.get, "/auth/v1/oidc/start")
            #expect(reply.status == 404 && reply.errorMessage?.contains("oidc.issuer") == true, "\(reply.body)")
        }
    }
}
