import Crypto
import Foundation
import HeraldCore
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import _CryptoExtras

/// A conformant FCM server on this machine, beside the APNs one: for the embedded default,
/// the tests and the benchmarks. HTTP/2 (and HTTP/1.1) over TLS (a self-signed certificate
/// made at start, ``certificatePEM``), on SwiftNIO directly, with
/// - `POST /token`: Google's token endpoint for the service accounts registered with it
///   (``admit(_:)``), checking each assertion (RS256 signature, key id, audience, scope,
///   an hour at most) and issuing access tokens;
/// - `POST /v1/projects/{project}/messages:send`: FCM's send, which takes a token issued
///   for the project, validates the body as FCM documents it, records what it took, and
///   answers FCM's errors: UNREGISTERED for a token made dead (``unregister(_:)``),
///   SENDER_ID_MISMATCH for one of another project, and the faults it is told to inject;
/// - `GET /sandbox/stats` and `GET /sandbox/assertions`: what it took, for another process.
public final class FCMSandbox: Sendable {
    /// A message the sandbox took.
    public struct Received: Sendable {
        public var project: String
        public var token: String
        public var message: [String: JSONAny]
        public var receivedAt: Date
    }

    /// An answer to inject: the next sends get it, in order.
    public struct Fault: Sendable, Hashable {
        public var status: Int
        public var grpcStatus: String
        public var errorCode: String?
        public var retryAfter: String?

        public init(status: Int, grpcStatus: String, errorCode: String?, retryAfter: String? = nil) {
            self.status = status
            self.grpcStatus = grpcStatus
            self.errorCode = errorCode
            self.retryAfter = retryAfter
        }

        public static func quotaExceeded(retryAfter: String?) -> Fault {
            Fault(status: 429, grpcStatus: "RESOURCE_EXHAUSTED", errorCode: "QUOTA_EXCEEDED", retryAfter: retryAfter)
        }
        public static func unavailable(retryAfter: String?) -> Fault {
            Fault(status: 503, grpcStatus: "UNAVAILABLE", errorCode: "UNAVAILABLE", retryAfter: retryAfter)
        }
        public static let internalError = Fault(status: 500, grpcStatus: "INTERNAL", errorCode: "INTERNAL")
        public static let thirdPartyAuth = Fault(status: 401, grpcStatus: "UNAUTHENTICATED", errorCode: "THIRD_PARTY_AUTH_ERROR")
    }

    public let port: Int
    public let certificatePEM: String
    /// The base URL of both endpoints.
    public var baseURL: String { "https://127.0.0.1:\(port)" }
    /// The token endpoint's URL.
    public var tokenURL: String { baseURL + "/token" }

    private let state: NIOLockedValueBox<FCMSandboxState>
    private let channel: any Channel

    private init(port: Int, certificatePEM: String, state: NIOLockedValueBox<FCMSandboxState>, channel: any Channel) {
        self.port = port
        self.certificatePEM = certificatePEM
        self.state = state
        self.channel = channel
    }

    /// Starts a sandbox on `port` (0: any free one) of 127.0.0.1. `record`: keep every
    /// message taken (off for benchmarks, which count them).
    ///
    /// TLS with ALPN: `h2` gets HTTP/2 (one handler on the connection, no stream channels),
    /// `http/1.1` the same routes over HTTP/1.1 (google-auth asks the token endpoint so).
    public static func start(
        port: Int = 0,
        record: Bool = true,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> FCMSandbox {
        let identity = try LocalTLSIdentity.make(organization: "Herald FCM Sandbox")
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem))
        )
        tls.applicationProtocols = ["h2", "http/1.1"]
        let context = try NIOSSLContext(configuration: tls)
        var initial = FCMSandboxState()
        initial.record = record
        let state = NIOLockedValueBox(initial)
        let channel = try await ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                }.flatMap {
                    channel.configureHTTP2SecureUpgrade(
                        h2ChannelConfigurator: { channel in
                            channel.eventLoop.makeCompletedFuture {
                                var connection = NIOHTTP2Handler.ConnectionConfiguration()
                                connection.initialSettings = [
                                    HTTP2Setting(parameter: .maxConcurrentStreams, value: 1000),
                                    HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
                                ]
                                connection.targetWindowSize = 1 << 24
                                try channel.pipeline.syncOperations.addHandlers([
                                    NIOHTTP2Handler(mode: .server, connectionConfiguration: connection),
                                    FCMSandboxHTTP2Handler(state: state),
                                ])
                            }
                        },
                        http1ChannelConfigurator: { channel in
                            channel.pipeline.configureHTTPServerPipeline().flatMap {
                                channel.pipeline.addHandler(FCMSandboxHTTP1Handler(state: state))
                            }
                        }
                    )
                }
            }
            .bind(host: "127.0.0.1", port: port)
            .get()
        return FCMSandbox(port: channel.localAddress?.port ?? port, certificatePEM: identity.certificatePEM, state: state, channel: channel)
    }

    /// Stops listening (the connections open close with their peers).
    public func shutdown() async {
        try? await channel.close()
    }

    // MARK: - What it admits

    /// Admits a service account: its assertions are checked with its key's public half,
    /// its access tokens send in its project.
    public func admit(_ account: FCMServiceAccount) throws {
        let key = try _RSA.Signing.PrivateKey(pemRepresentation: account.privateKeyPEM)
        state.withLockedValue {
            $0.accounts[account.clientEmail] = FCMSandboxState.Account(
                clientEmail: account.clientEmail,
                keyID: account.privateKeyID,
                publicKeyDER: key.publicKey.derRepresentation,
                projectID: account.projectID,
                tokenURI: account.tokenURI
            )
        }
    }

    /// The token endpoint refuses the account's assertions from now on (a key deleted in
    /// Google's console).
    public func refuse(clientEmail: String, reason: String = "Invalid grant: account not found") {
        state.withLockedValue { $0.refusedAccounts[clientEmail] = reason }
    }

    /// Access tokens issued so far stop working (FCM answers 401 until a new one is got).
    public func expireAccessTokens() {
        state.withLockedValue { $0.issued.removeAll() }
    }

    // MARK: - Faults

    /// The token is dead: sends to it get UNREGISTERED.
    public func unregister(_ token: String) {
        _ = state.withLockedValue { $0.unregistered.insert(token) }
    }

    /// The token belongs to another project: sends from this one get SENDER_ID_MISMATCH.
    public func bind(_ token: String, toProject project: String) {
        state.withLockedValue { $0.tokenProjects[token] = project }
    }

    /// The next sends get these answers, in order.
    public func inject(_ faults: [Fault]) {
        state.withLockedValue { $0.faults += faults }
    }

    // MARK: - What it took

    public var received: [Received] { state.withLockedValue { $0.received } }
    public var receivedCount: Int { state.withLockedValue { $0.receivedCount } }
    /// Requests to the token endpoint, answered or refused.
    public var tokenRequests: Int { state.withLockedValue { $0.tokenRequests } }
    /// The assertions it accepted, as sent.
    public var assertions: [String] { state.withLockedValue { $0.assertions } }
}

extension FCMSandbox {
    /// A service-account key file as Firebase's console writes one, with a fresh RSA key,
    /// for the tests, the benchmarks and a local setup: its `token_uri` is Google's, as in
    /// every real file (a node routed to the sandbox sends the assertion here, which checks
    /// it against that audience).
    /// `tokenURI`: another token endpoint (this sandbox's own, for a client such as
    /// google-auth that posts the assertion where the file says).
    public static func keyFile(
        project: String,
        email: String? = nil,
        tokenURI: String = FCMServiceAccount.googleTokenURI
    ) throws -> (json: Data, account: FCMServiceAccount) {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let object: [String: String] = [
            "type": "service_account",
            "project_id": project,
            "private_key_id": UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased(),
            "private_key": key.pkcs8PEMRepresentation,
            "client_email": email ?? "firebase-adminsdk-\(UUID().uuidString.prefix(5).lowercased())@\(project).iam.gserviceaccount.com",
            "client_id": String(UInt64.random(in: 100_000_000_000...999_999_999_999)),
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": tokenURI,
            "universe_domain": "googleapis.com",
        ]
        let json = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return (json, try FCMServiceAccount.parse(json))
    }
}
