import Crypto
import Foundation

/// A signed provider token (JWT) and when it was issued.
struct APNsProviderToken: Sendable, Hashable {
    let jwt: String
    let issuedAt: Date
    /// The `authorization` header value, built once rather than for every request.
    let authorization: String

    init(jwt: String, issuedAt: Date) {
        self.jwt = jwt
        self.issuedAt = issuedAt
        self.authorization = "bearer " + jwt
    }
}

/// Signs ES256 provider tokens: header `{"alg":"ES256","kid":...}`, claims `{"iss":...,"iat":<number>}`.
struct APNsTokenSigner: Sendable, Equatable {
    var keyID: String
    var teamID: String
    /// The key's raw bytes (Crypto's key types aren't Sendable).
    private var rawKey: Data

    init(keyID: String, teamID: String, privateKeyPEM: String) throws {
        self.keyID = keyID
        self.teamID = teamID
        self.rawKey = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM).rawRepresentation
    }

    func sign(issuedAt: Date) throws -> APNsProviderToken {
        let iat = Int(issuedAt.timeIntervalSince1970)
        let header = Self.base64URL(Data(#"{"alg":"ES256","kid":"\#(keyID)"}"#.utf8))
        let claims = Self.base64URL(Data(#"{"iss":"\#(teamID)","iat":\#(iat)}"#.utf8))
        let signingInput = "\(header).\(claims)"
        let key = try P256.Signing.PrivateKey(rawRepresentation: rawKey)
        let signature = try key.signature(for: Data(signingInput.utf8))
        return APNsProviderToken(
            jwt: "\(signingInput).\(Self.base64URL(signature.rawRepresentation))",
            issuedAt: Date(timeIntervalSince1970: TimeInterval(iat))
        )
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// The timing rules of token auth (apns.md, "Token auth").
struct APNsTokenPolicy: Sendable {
    /// Refresh the shared token once it is this old (Apple: at least every 60 minutes).
    var refreshAge: TimeInterval = 45 * 60
    /// Never change the token on one connection sooner than this after it started using one.
    var minimumChangeInterval: TimeInterval = 20 * 60
    /// A connection that can't change yet keeps its older token until this age, then is replaced.
    var maximumAge: TimeInterval = 55 * 60

    enum ConnectionDecision: Sendable, Hashable {
        /// Send with this token (and remember it as the connection's).
        case use(APNsProviderToken)
        /// The connection can neither keep its token nor change it: replace the connection.
        case retire
    }

    /// Which token a connection sends with, given the shared one.
    func decide(
        connectionToken: APNsProviderToken?,
        adoptedAt: Date?,
        shared: APNsProviderToken,
        now: Date
    ) -> ConnectionDecision {
        guard let connectionToken, let adoptedAt, connectionToken != shared else { return .use(shared) }
        if now.timeIntervalSince(adoptedAt) >= minimumChangeInterval { return .use(shared) }
        if now.timeIntervalSince(connectionToken.issuedAt) < maximumAge { return .use(connectionToken) }
        return .retire
    }
}
