import Configuration
import Foundation
import HeraldCore

extension OIDCConfiguration {
    /// Reads signing in through OpenID Connect from Herald's configuration; nil when
    /// `oidc.issuer` is not set.
    ///
    /// Configuration keys:
    /// - `oidc.issuer` (string URL): the provider's issuer, https (http on loopback only).
    /// - `oidc.clientId` (string): Herald's client id at the provider; required with an issuer.
    /// - `oidc.clientSecret` (string, secret): its secret; required with an issuer.
    /// - `oidc.redirectUrl` (string URL): `<Herald's public URL>/auth/v1/oidc/callback`, as
    ///   registered with the provider; required with an issuer.
    /// - `oidc.name` (string, default: `OpenID Connect`): how the sign-in is labelled.
    ///
    /// - Throws: ``ConfigurationError`` naming a missing or malformed key.
    public init?(reader: ConfigReader) throws {
        let section = ConfigSection(reader, "oidc")
        let issuer = section.optionalString("issuer")
        let clientID = section.optionalString("clientId")
        let clientSecret = section.optionalString("clientSecret", isSecret: true)
        let redirect = section.optionalString("redirectUrl")
        let name = section.string("name", default: "OpenID Connect")
        guard let issuer else {
            if clientID != nil || clientSecret != nil || redirect != nil { throw section.error("issuer", "is required with the other oidc keys") }
            return nil
        }
        guard let url = URL(string: issuer), Self.isAllowed(url) else {
            throw section.error("issuer", "must be an https URL (http only on loopback)")
        }
        guard let clientID, !clientID.isEmpty else { throw section.error("clientId", "is required with oidc.issuer") }
        guard let clientSecret, !clientSecret.isEmpty else { throw section.error("clientSecret", "is required with oidc.issuer") }
        guard let redirect, let redirectURL = URL(string: redirect),
            ["http", "https"].contains(redirectURL.scheme?.lowercased() ?? ""), redirectURL.path.hasSuffix("/auth/v1/oidc/callback")
        else {
            throw section.error("redirectUrl", "must be Herald's public URL followed by /auth/v1/oidc/callback")
        }
        self.init(issuer: issuer, clientID: clientID, clientSecret: clientSecret, redirectURL: redirect, name: name)
    }
}
