import Foundation
import _CryptoExtras

/// The signed JWT a service account exchanges for an access token (RFC 7523, Google's
/// "Using OAuth 2.0 for server to server applications"): RS256, the key's id in the
/// header; the account as issuer, the token endpoint as audience, FCM's scope, valid for
/// an hour at most.
public enum FCMAssertion {
    /// The scope FCM's HTTP v1 API takes.
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// The grant type the token endpoint is asked with.
    public static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    /// How long an assertion is valid: Google takes an hour at most.
    public static let lifetime: TimeInterval = 3600

    /// The assertion, signed now.
    public static func sign(_ account: FCMServiceAccount, issuedAt: Date = Date()) throws -> String {
        let iat = Int(issuedAt.timeIntervalSince1970)
        var header = JSONObjectWriter(capacity: 96)
        header.field("alg", "RS256")
        header.field("typ", "JWT")
        header.field("kid", account.privateKeyID)
        var claims = JSONObjectWriter(capacity: 256)
        claims.field("iss", account.clientEmail)
        claims.field("scope", scope)
        claims.field("aud", account.tokenURI)
        claims.field("iat", iat)
        claims.field("exp", iat + Int(lifetime))
        let signingInput = Base64URL.encode(header.finish()) + "." + Base64URL.encode(claims.finish())
        let key = try _RSA.Signing.PrivateKey(pemRepresentation: account.privateKeyPEM)
        let signature = try key.signature(for: Data(signingInput.utf8), padding: .insecurePKCS1v1_5)
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// The token endpoint's form body for an assertion.
    public static func tokenRequestBody(assertion: String) -> String {
        "grant_type=" + grantType.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + "&assertion=" + assertion
    }
}
