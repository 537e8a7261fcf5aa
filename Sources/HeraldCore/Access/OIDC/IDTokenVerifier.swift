import Crypto
import Foundation
import _CryptoExtras

/// A JSON Web Key (RFC 7517) of a provider's set: RSA (`n`, `e`) or P-256 (`x`, `y`).
public struct JSONWebKey: Sendable, Hashable, Codable {
    public var kty: String
    public var kid: String?
    public var alg: String?
    public var use: String?
    public var n: String?
    public var e: String?
    public var crv: String?
    public var x: String?
    public var y: String?

    public init(kty: String, kid: String?, alg: String? = nil, use: String? = nil, n: String? = nil, e: String? = nil) {
        self.kty = kty
        self.kid = kid
        self.alg = alg
        self.use = use
        self.n = n
        self.e = e
    }
}

/// A provider's key set (its `jwks_uri`).
public struct JSONWebKeySet: Sendable, Hashable, Codable {
    public var keys: [JSONWebKey]

    public init(keys: [JSONWebKey]) { self.keys = keys }
}

/// What Herald takes from a verified ID token.
public struct IDTokenClaims: Sendable, Hashable {
    public var issuer: String
    public var subject: String
    public var email: String?
    public var emailVerified: Bool
    public var name: String?

    /// How the user is bound to the identity: issuer, a space, subject.
    public var identity: String { "\(issuer) \(subject)" }
}

/// Verifies an OpenID Connect ID token (Core 1.0 §3.1.3.7): its signature by a key of the
/// provider's set (RS256 or ES256; `none` and HMAC refused), the issuer, the audience (this
/// client), the expiry (with a small skew), and the nonce of the sign-in it answers. Pure:
/// the key set and the time come in.
public enum IDTokenVerifier {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case malformed
        /// The token's key id is not in the set (fetch the set again, once).
        case unknownKey(String?)
        case unsupportedAlgorithm(String)
        case badSignature
        case wrongIssuer
        case wrongAudience
        case expired
        case wrongNonce

        public var description: String {
            switch self {
            case .malformed: "the ID token is not a signed JWT"
            case .unknownKey(let kid): "no key \(kid ?? "(none named)") in the provider's key set"
            case .unsupportedAlgorithm(let alg): "the ID token is signed with \(alg); RS256 or ES256 expected"
            case .badSignature: "the ID token's signature does not verify"
            case .wrongIssuer: "the ID token is from another issuer"
            case .wrongAudience: "the ID token is for another client"
            case .expired: "the ID token expired"
            case .wrongNonce: "the ID token answers another sign-in (nonce)"
            }
        }
    }

    /// Seconds of clock difference tolerated on `exp` and `iat`.
    public static let skew: TimeInterval = 120

    public static func verify(
        _ token: String,
        keys: JSONWebKeySet,
        issuer: String,
        clientID: String,
        nonce: String,
        now: Date
    ) throws(Failure) -> IDTokenClaims {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let payloadData = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: payloadData) as? [String: Any],
            let alg = header["alg"] as? String
        else { throw .malformed }
        guard alg == "RS256" || alg == "ES256" else { throw .unsupportedAlgorithm(alg) }
        let kid = header["kid"] as? String
        let candidates = keys.keys.filter { key in
            (kid == nil || key.kid == kid) && (key.use == nil || key.use == "sig") && (key.alg == nil || key.alg == alg)
                && (alg == "RS256" ? key.kty == "RSA" : key.kty == "EC" && key.crv == "P-256")
        }
        guard !candidates.isEmpty else { throw .unknownKey(kid) }
        let signed = Data("\(parts[0]).\(parts[1])".utf8)
        guard candidates.contains(where: { Self.verifies(signature, of: signed, with: $0, alg: alg) }) else { throw .badSignature }

        guard claims["iss"] as? String == issuer else { throw .wrongIssuer }
        let audience = (claims["aud"] as? String).map { [$0] } ?? (claims["aud"] as? [String]) ?? []
        guard audience.contains(clientID) else { throw .wrongAudience }
        if audience.count > 1, let azp = claims["azp"] as? String, azp != clientID { throw .wrongAudience }
        guard let exp = (claims["exp"] as? NSNumber)?.doubleValue, now.timeIntervalSince1970 < exp + skew else { throw .expired }
        if let iat = (claims["iat"] as? NSNumber)?.doubleValue, iat > now.timeIntervalSince1970 + skew { throw .expired }
        guard let sent = claims["nonce"] as? String, SecretHash.equal(Array(sent.utf8), Array(nonce.utf8)) else { throw .wrongNonce }
        guard let subject = claims["sub"] as? String, !subject.isEmpty else { throw .malformed }
        let verified = (claims["email_verified"] as? Bool) ?? ((claims["email_verified"] as? String) == "true")
        return IDTokenClaims(
            issuer: issuer,
            subject: subject,
            email: (claims["email"] as? String)?.lowercased(),
            emailVerified: verified,
            name: claims["name"] as? String
        )
    }

    private static func verifies(_ signature: Data, of signed: Data, with key: JSONWebKey, alg: String) -> Bool {
        switch alg {
        case "RS256":
            guard let n = key.n.flatMap(Base64URL.decode), let e = key.e.flatMap(Base64URL.decode),
                let publicKey = try? _RSA.Signing.PublicKey(n: n, e: e), publicKey.keySizeInBits >= 2048
            else { return false }
            return publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: signed, padding: .insecurePKCS1v1_5)
        case "ES256":
            guard let x = key.x.flatMap(Base64URL.decode), let y = key.y.flatMap(Base64URL.decode), x.count == 32, y.count == 32,
                let publicKey = try? P256.Signing.PublicKey(x963Representation: [0x04] + x + y),
                let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
            else { return false }
            return publicKey.isValidSignature(ecdsa, for: signed)
        default:
            return false
        }
    }
}

/// PKCE (RFC 7636): the S256 challenge of a verifier.
public enum PKCE {
    public static func challenge(of verifier: String) -> String {
        Base64URL.encode(Data(SHA256.hash(data: Data(verifier.utf8))))
    }
}
