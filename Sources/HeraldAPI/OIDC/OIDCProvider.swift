import AsyncHTTPClient
import Foundation
import HeraldCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// The provider as Herald talks to it: its discovery document and key set (cached; the
/// key set fetched again, at most once a minute, when a token names a key it lacks), and
/// the exchange of an authorization code for a verified ID token.
final class OIDCProvider: Sendable {
    struct Discovery: Decodable, Sendable {
        var issuer: String
        var authorizationEndpoint: String
        var tokenEndpoint: String
        var jwksURI: String

        enum CodingKeys: String, CodingKey {
            case issuer
            case authorizationEndpoint = "authorization_endpoint"
            case tokenEndpoint = "token_endpoint"
            case jwksURI = "jwks_uri"
        }
    }

    private struct Cache {
        var discovery: Discovery?
        var keys: JSONWebKeySet?
        var keysFetched: ContinuousClock.Instant?
    }

    let configuration: OIDCConfiguration
    private let client: HTTPClient
    private let cache = NIOLockedValueBox(Cache())
    private let logger = Logger(label: "herald.api.oidc")

    init(configuration: OIDCConfiguration, client: HTTPClient = .shared) {
        self.configuration = configuration
        self.client = client
    }

    /// Where to send the browser to sign in, for a sign-in with these values.
    func authorizationURL(state: String, nonce: String, codeChallenge: String) async throws -> String {
        let discovery = try await discovered()
        var components = URLComponents(string: discovery.authorizationEndpoint)
        let existing = components?.queryItems ?? []
        components?.queryItems =
            existing + [
                URLQueryItem(name: "response_type", value: "code"),
                URLQueryItem(name: "client_id", value: configuration.clientID),
                URLQueryItem(name: "redirect_uri", value: configuration.redirectURL),
                URLQueryItem(name: "scope", value: "openid email profile"),
                URLQueryItem(name: "state", value: state),
                URLQueryItem(name: "nonce", value: nonce),
                URLQueryItem(name: "code_challenge", value: codeChallenge),
                URLQueryItem(name: "code_challenge_method", value: "S256"),
            ]
        guard let url = components?.url?.absoluteString else {
            throw Self.failure("the provider's authorization_endpoint is not a URL")
        }
        return url
    }

    /// Exchanges the code at the token endpoint and verifies the ID token it answers.
    func claims(code: String, codeVerifier: String, nonce: String) async throws -> IDTokenClaims {
        let discovery = try await discovered()
        var form = URLComponents()
        form.queryItems = [
            URLQueryItem(name: "grant_type", value: "authorization_code"),
            URLQueryItem(name: "code", value: code),
            URLQueryItem(name: "redirect_uri", value: configuration.redirectURL),
            URLQueryItem(name: "code_verifier", value: codeVerifier),
        ]
        var request = HTTPClientRequest(url: discovery.tokenEndpoint)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        // client_secret_basic: both halves form-encoded first (RFC 6749 §2.3.1).
        let user = Self.formEncoded(configuration.clientID)
        let password = Self.formEncoded(configuration.clientSecret)
        request.headers.add(name: "Authorization", value: "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
        request.body = .bytes(ByteBuffer(string: form.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B") ?? ""))
        let (status, body) = try await fetch(request)
        guard status == 200 else {
            throw Self.failure("the provider refused the code (\(status)): \(String(decoding: body.prefix(200), as: UTF8.self))")
        }
        struct TokenResponse: Decodable {
            var idToken: String
            enum CodingKeys: String, CodingKey { case idToken = "id_token" }
        }
        guard let token = try? JSONDecoder().decode(TokenResponse.self, from: body) else {
            throw Self.failure("the provider's token answer has no id_token")
        }
        return try await verified(token.idToken, nonce: nonce)
    }

    private func verified(_ token: String, nonce: String) async throws -> IDTokenClaims {
        var refetched = false
        while true {
            let keys = try await keySet(refresh: refetched)
            do {
                return try IDTokenVerifier.verify(
                    token,
                    keys: keys,
                    issuer: configuration.issuer,
                    clientID: configuration.clientID,
                    nonce: nonce,
                    now: Date()
                )
            } catch .unknownKey where !refetched && mayRefetchKeys() {
                refetched = true  // The provider rotated its keys: fetch them once more.
            } catch {
                throw Self.failure(error.description)
            }
        }
    }

    private func mayRefetchKeys() -> Bool {
        cache.withLockedValue { ($0.keysFetched.map { ContinuousClock.now - $0 > .seconds(60) }) ?? true }
    }

    private func discovered() async throws -> Discovery {
        if let discovery = cache.withLockedValue({ $0.discovery }) { return discovery }
        let base = configuration.issuer.hasSuffix("/") ? String(configuration.issuer.dropLast()) : configuration.issuer
        let (status, body) = try await fetch(HTTPClientRequest(url: base + "/.well-known/openid-configuration"))
        guard status == 200, let discovery = try? JSONDecoder().decode(Discovery.self, from: body) else {
            throw Self.failure("the provider's discovery document could not be read (\(status))")
        }
        guard discovery.issuer == configuration.issuer else {
            throw Self.failure("the provider says its issuer is \(discovery.issuer), not \(configuration.issuer)")
        }
        for endpoint in [discovery.authorizationEndpoint, discovery.tokenEndpoint, discovery.jwksURI] {
            guard let url = URL(string: endpoint), OIDCConfiguration.isAllowed(url) else {
                throw Self.failure("the provider's endpoint \(endpoint) is not https")
            }
        }
        cache.withLockedValue { $0.discovery = discovery }
        return discovery
    }

    private func keySet(refresh: Bool) async throws -> JSONWebKeySet {
        if !refresh, let keys = cache.withLockedValue({ $0.keys }) { return keys }
        let discovery = try await discovered()
        let (status, body) = try await fetch(HTTPClientRequest(url: discovery.jwksURI))
        guard status == 200, let keys = try? JSONDecoder().decode(JSONWebKeySet.self, from: body) else {
            throw Self.failure("the provider's key set could not be read (\(status))")
        }
        cache.withLockedValue {
            $0.keys = keys
            $0.keysFetched = .now
        }
        return keys
    }

    private func fetch(_ request: HTTPClientRequest) async throws -> (status: UInt, body: Data) {
        do {
            let response = try await client.execute(request, timeout: .seconds(10), logger: logger)
            let body = try await response.body.collect(upTo: 1 << 20)
            return (response.status.code, Data(buffer: body))
        } catch let error as HeraldError {
            throw error
        } catch {
            logger.warning("the OpenID Connect provider is out of reach", metadata: ["error": "\(error)"])
            throw HeraldError(.unavailable, "the sign-in provider is out of reach; try again")
        }
    }

    private static func formEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    static func failure(_ reason: String) -> HeraldError {
        HeraldError(.unauthorized, "sign-in through the provider failed: \(reason)")
    }
}
