import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldHTTP2
import Logging
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOSSL

/// Sends to Firebase Cloud Messaging's HTTP v1 API: one request per token
/// (`POST /v1/projects/{project}/messages:send`) over a few HTTP/2 connections, each
/// carrying many requests at once (``FCMConnections``, HeraldHTTP2's streams without a
/// channel per stream), with an OAuth 2.0 access token per service account, got by
/// exchanging an RS256 assertion at the account's `token_uri` (AsyncHTTPClient: once an
/// hour) and cached (``FCMAccessTokens``).
public final class FCMClient: Sendable {
    /// Where the requests go.
    public struct Endpoints: Sendable, Hashable {
        /// The base of `messages:send`.
        public var sendBase: String
        /// Where assertions are exchanged; nil: each account's own `token_uri`.
        public var tokenURL: String?
        /// The only certificates trusted (a local sandbox's); empty: the system's roots.
        public var trustedCertificatePEMs: [String]

        public init(sendBase: String, tokenURL: String?, trustedCertificatePEMs: [String] = []) {
            self.sendBase = sendBase
            self.tokenURL = tokenURL
            self.trustedCertificatePEMs = trustedCertificatePEMs
        }

        /// Google's FCM, each account's token endpoint.
        public static let google = Endpoints(sendBase: "https://fcm.googleapis.com", tokenURL: nil)
    }

    public let endpoints: Endpoints
    private let http: HTTPClient
    private let tokens: FCMAccessTokens
    private let logger: Logger
    /// The connections `messages:send` goes over, and the send URL's parts.
    private let connections: FCMConnections?
    private let authority: String
    private let pathPrefix: String
    /// How long a send waits for FCM's answer.
    public static let requestTimeout: TimeAmount = .seconds(30)

    /// A certificate of ``Endpoints/trustedCertificatePEMs`` that doesn't parse is left out
    /// (and the connection to that endpoint fails its TLS check).
    public init(endpoints: Endpoints, logger: Logger, connectionCount: Int = 2) {
        var tls = TLSConfiguration.makeClientConfiguration()
        if !endpoints.trustedCertificatePEMs.isEmpty {
            tls.trustRoots = .certificates(
                endpoints.trustedCertificatePEMs.compactMap { try? NIOSSLCertificate(bytes: Array($0.utf8), format: .pem) }
            )
        }
        var h2 = tls
        h2.applicationProtocols = ["h2"]
        let base = URL(string: endpoints.sendBase)
        let host = base?.host ?? "fcm.googleapis.com"
        let port = base?.port ?? 443
        authority = port == 443 ? host : "\(host):\(port)"
        pathPrefix = base.map { $0.path.hasSuffix("/") ? String($0.path.dropLast()) : $0.path } ?? ""
        connections = (try? NIOSSLContext(configuration: h2)).map { FCMConnections(host: host, port: port, sslContext: $0, count: connectionCount) }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls,
            timeout: .init(connect: .seconds(10), read: .seconds(30)),
            connectionPool: .init(idleTimeout: .seconds(60))
        )
        configuration.httpVersion = .automatic
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.endpoints = endpoints
        self.http = http
        self.logger = logger
        self.tokens = FCMAccessTokens { account in
            try await Self.exchange(account, endpoints: endpoints, http: http)
        }
    }

    public func shutdown() async throws {
        connections?.closeAll()
        try await http.shutdown()
    }

    /// An access token for the account: the cached one, or a new exchange. Throws
    /// ``FCMCredentialError``. `askingAgain`: a refusal remembered from a send is not the
    /// answer (an upload, or `fcm doctor`, asks the endpoint anew).
    public func accessToken(for account: FCMServiceAccount, askingAgain: Bool = false) async throws -> String {
        try await tokens.token(for: account, askingAgain: askingAgain)
    }

    /// Sends one message and says what FCM answered. A 401 is answered once more with a
    /// new access token before the credentials count as refused.
    public func send(_ message: FCMMessage, account: FCMServiceAccount) async -> FCMOutcome {
        let path = "\(pathPrefix)/v1/projects/\(account.projectID)/messages:send"
        guard let connections else { return .retryLater(reason: "Unreachable", after: nil) }
        for attempt in 0..<2 {
            let token: String
            do {
                token = try await tokens.token(for: account)
            } catch let error as FCMCredentialError {
                switch error {
                case .refused(let reason): return .credentialsRefused(reason: reason)
                case .unavailable(let reason): return .retryLater(reason: reason, after: nil)
                }
            } catch {
                return .retryLater(reason: "TokenEndpointUnreachable", after: nil)
            }
            var headers = HPACKHeaders()
            headers.add(name: ":method", value: "POST")
            headers.add(name: ":scheme", value: "https")
            headers.add(name: ":authority", value: authority)
            headers.add(name: ":path", value: path)
            // A token is sent thousands of times an hour: HPACK indexes it once.
            headers.add(name: "authorization", value: "Bearer " + token)
            headers.add(name: "content-type", value: "application/json; charset=UTF-8")
            do {
                let connection = try await connections.next()
                let response = try await connection.execute(headers: headers, body: message.body, deadline: .now() + Self.requestTimeout)
                let bytes = response.body?.readableBytesView ?? ByteBuffer().readableBytesView
                if response.status == 200 {
                    return .delivered(name: Self.name(in: bytes))
                }
                let outcome = FCMErrorTable.classify(
                    status: response.status,
                    body: bytes,
                    retryAfter: response.headers.first(name: "retry-after")
                )
                // The access token expired or was revoked: once more with a new one.
                // (THIRD_PARTY_AUTH_ERROR is about the app's APNs or web push credentials
                // in Firebase, which a new token doesn't change.)
                if response.status == 401, attempt == 0, outcome == .credentialsRefused(reason: "UNAUTHENTICATED") {
                    await tokens.invalidate(account, token: token)
                    continue
                }
                return outcome
            } catch {
                logger.debug("FCM request failed", metadata: ["error": "\(error)"])
                return .retryLater(reason: "Unreachable", after: nil)
            }
        }
        return .credentialsRefused(reason: "UNAUTHENTICATED")
    }

    /// FCM's name for a message it took, from `{"name": "projects/…/messages/…"}`, read
    /// without a JSON parser: it is every answer's whole body.
    static func name(in body: ByteBufferView) -> String {
        let text = String(decoding: body, as: UTF8.self)
        guard let key = text.range(of: #""name""#), let open = text[key.upperBound...].firstIndex(of: "\""),
            let close = text[text.index(after: open)...].firstIndex(of: "\"")
        else { return "" }
        return String(text[text.index(after: open)..<close])
    }

    /// The token endpoint's answer to the account's assertion.
    static func exchange(_ account: FCMServiceAccount, endpoints: Endpoints, http: HTTPClient) async throws -> FCMAccessTokens.Issued {
        let assertion: String
        do {
            assertion = try FCMAssertion.sign(account)
        } catch {
            throw FCMCredentialError.refused("the private key does not sign: \(error)")
        }
        var request = HTTPClientRequest(url: endpoints.tokenURL ?? account.tokenURI)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: FCMAssertion.tokenRequestBody(assertion: assertion)))
        let response: HTTPClientResponse
        let body: ByteBuffer
        do {
            response = try await http.execute(request, timeout: .seconds(30))
            body = try await response.body.collect(upTo: 1 << 16)
        } catch {
            throw FCMCredentialError.unavailable("\(error)")
        }
        let object = (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any] ?? [:]
        guard response.status == .ok else {
            let reason = [object["error"] as? String, object["error_description"] as? String].compactMap { $0 }.joined(separator: ": ")
            let described = reason.isEmpty ? "HTTP \(response.status.code)" : reason
            throw response.status.code >= 500 ? FCMCredentialError.unavailable(described) : FCMCredentialError.refused(described)
        }
        guard let token = object["access_token"] as? String, !token.isEmpty else {
            throw FCMCredentialError.unavailable("the token endpoint's answer has no access_token")
        }
        let expiresIn = (object["expires_in"] as? Int) ?? 3600
        return FCMAccessTokens.Issued(token: token, expiresIn: .seconds(max(1, expiresIn)))
    }
}
