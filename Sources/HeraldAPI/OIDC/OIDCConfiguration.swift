import Foundation

/// Signing in through an OpenID Connect provider (the authorization code flow with PKCE):
/// the provider's issuer, Herald's client there, and the callback URL registered with it.
public struct OIDCConfiguration: Sendable, Hashable {
    /// The issuer URL; its `/.well-known/openid-configuration` names the endpoints.
    public var issuer: String
    public var clientID: String
    public var clientSecret: String
    /// Where the provider sends the browser back: `<Herald's public URL>/auth/v1/oidc/callback`.
    public var redirectURL: String
    /// A label for the sign-in button and logs.
    public var name: String

    public init(issuer: String, clientID: String, clientSecret: String, redirectURL: String, name: String = "OpenID Connect") {
        self.issuer = issuer
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.redirectURL = redirectURL
        self.name = name
    }

    /// Whether `url` may be one of the provider's: https, or http on loopback only (a
    /// provider on the same machine, as in tests).
    static func isAllowed(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return false }
        if scheme == "https" { return true }
        return scheme == "http" && ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host)
    }
}
