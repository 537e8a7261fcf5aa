import Crypto
import Foundation
import HTTPTypes
import HeraldCore
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import _CryptoExtras

/// A small OpenID Connect provider on loopback, for the sign-in tests: discovery, a key set
/// (RSA, RS256), an authorization endpoint that signs in whoever `login_as` names (no
/// pages), and a token endpoint that checks the client's secret, the code, its redirect URI
/// and the PKCE verifier before it answers a signed ID token. ``misbehave`` makes it answer
/// what a broken or hostile provider would.
final class FakeOIDCProvider: Sendable {
    enum Misbehaviour: Sendable {
        case none
        /// Signs with a key that is not in its set.
        case foreignKey
        /// Answers an ID token for another sign-in.
        case wrongNonce
        /// For another client.
        case wrongAudience
        case expired
        /// Says the email is not verified.
        case unverifiedEmail
        /// Signs with `alg: none`.
        case unsigned
    }

    struct Grant: Sendable {
        var email: String
        var subject: String
        var nonce: String
        var challenge: String
        var redirectURI: String
        var clientID: String
    }

    struct State: Sendable {
        var grants: [String: Grant] = [:]
        var misbehave = Misbehaviour.none
        var tokenRequests = 0
    }

    static let clientID = "herald-console"
    static let clientSecret = "fake provider's client secret"

    let key: _RSA.Signing.PrivateKey
    let foreignKey: _RSA.Signing.PrivateKey
    let state = NIOLockedValueBox(State())
    private let port = NIOLockedValueBox(0)

    /// `http://127.0.0.1:<its port>`.
    var issuer: String { "http://127.0.0.1:\(port.withLockedValue { $0 })" }

    private init() throws {
        key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        foreignKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    }

    var misbehave: Misbehaviour {
        get { state.withLockedValue { $0.misbehave } }
        set { state.withLockedValue { $0.misbehave = newValue } }
    }

    /// Runs a provider on a free loopback port for the time of `body`.
    static func run<Result: Sendable>(_ body: @Sendable (FakeOIDCProvider) async throws -> Result) async throws -> Result {
        let provider = try FakeOIDCProvider()
        let router = Router()
        provider.routes(router)
        let (started, startedContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                startedContinuation.yield(channel.localAddress?.port ?? 0)
                startedContinuation.finish()
            }
        )
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService(gracefulShutdownSignals: []) }
            defer { group.cancelAll() }
            for await port in started { provider.port.withLockedValue { $0 = port } }
            return try await body(provider)
        }
    }

    private func routes(_ router: Router<BasicRequestContext>) {
        router.get("/.well-known/openid-configuration") { _, _ in
            Self.json([
                "issuer": self.issuer, "authorization_endpoint": "\(self.issuer)/authorize", "token_endpoint": "\(self.issuer)/token",
                "jwks_uri": "\(self.issuer)/jwks", "response_types_supported": ["code"], "id_token_signing_alg_values_supported": ["RS256"],
            ])
        }
        router.get("/jwks") { _, _ in
            let primitives = try self.key.publicKey.getKeyPrimitives()
            return Self.json([
                "keys": [
                    [
                        "kty": "RSA", "kid": "fake-1", "use": "sig", "alg": "RS256", "n": Base64URL.encode(primitives.modulus),
                        "e": Base64URL.encode(primitives.publicExponent),
                    ]
                ]
            ])
        }
        router.get("/authorize") { request, _ -> Response in
            let query = request.uri.queryParameters
            guard query.get("response_type") == "code", query.get("code_challenge_method") == "S256",
                let redirect = query.get("redirect_uri"), let state = query.get("state"), let nonce = query.get("nonce"),
                let challenge = query.get("code_challenge"), let clientID = query.get("client_id"), let email = query.get("login_as")
            else { return Response(status: .badRequest) }
            let code = RandomToken.hex(byteCount: 16)
            let grant = Grant(
                email: email,
                subject: query.get("subject") ?? "subject-\(email)",
                nonce: nonce,
                challenge: challenge,
                redirectURI: redirect,
                clientID: clientID
            )
            self.state.withLockedValue { $0.grants[code] = grant }
            var location = URLComponents(string: redirect)!
            location.queryItems = [URLQueryItem(name: "code", value: code), URLQueryItem(name: "state", value: state)]
            return Response(status: .found, headers: [.location: location.url!.absoluteString])
        }
        router.post("/token") { request, _ -> Response in
            self.state.withLockedValue { $0.tokenRequests += 1 }
            let expected = "Basic " + Data("\(Self.clientID):\(Self.formEncoded(Self.clientSecret))".utf8).base64EncodedString()
            guard request.headers[.authorization] == expected else { return Self.json(["error": "invalid_client"], status: .unauthorized) }
            let body = try await request.body.collect(upTo: 65_536)
            var form: [String: String] = [:]
            for pair in String(buffer: body).split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
                if parts.count == 2 { form[parts[0]] = parts[1] }
            }
            guard form["grant_type"] == "authorization_code", let code = form["code"],
                let grant = self.state.withLockedValue({ $0.grants.removeValue(forKey: code) }), form["redirect_uri"] == grant.redirectURI,
                let verifier = form["code_verifier"], PKCE.challenge(of: verifier) == grant.challenge
            else { return Self.json(["error": "invalid_grant"], status: .badRequest) }
            return Self.json(["access_token": "unused", "token_type": "Bearer", "id_token": try self.idToken(for: grant)])
        }
    }

    private func idToken(for grant: Grant) throws -> String {
        let misbehave = self.misbehave
        let now = Int(Date().timeIntervalSince1970)
        let claims: [String: Any] = [
            "iss": issuer, "sub": grant.subject, "aud": misbehave == .wrongAudience ? "someone-else" : grant.clientID,
            "exp": misbehave == .expired ? now - 3600 : now + 300, "iat": misbehave == .expired ? now - 4000 : now,
            "nonce": misbehave == .wrongNonce ? "another" : grant.nonce, "email": grant.email,
            "email_verified": misbehave != .unverifiedEmail, "name": "Fake User",
        ]
        let alg = misbehave == .unsigned ? "none" : "RS256"
        let header = Base64URL.encode(try JSONSerialization.data(withJSONObject: ["alg": alg, "kid": "fake-1", "typ": "JWT"]))
        let payload = Base64URL.encode(try JSONSerialization.data(withJSONObject: claims))
        let input = Data("\(header).\(payload)".utf8)
        if misbehave == .unsigned { return "\(header).\(payload)." }
        let signer = misbehave == .foreignKey ? foreignKey : key
        let signature = try signer.signature(for: input, padding: .insecurePKCS1v1_5)
        return "\(header).\(payload).\(Base64URL.encode(signature.rawRepresentation))"
    }

    static func formEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    private static func json(_ object: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
