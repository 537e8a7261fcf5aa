import Crypto
import Foundation
import HeraldCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import ServiceLifecycle

/// A conformant APNs server for tests and local runs.
///
/// Speaks HTTP/2 over TLS (ALPN `h2`, a self-signed certificate made at start) or h2c,
/// validates requests in Apple's order, verifies provider tokens against registered keys,
/// injects faults on demand, and keeps every accepted notification plus, per device, the
/// notification centre (collapse id → shown notification) so replace and recall can be
/// checked end to end.
public final class APNsSandbox: Sendable {
    /// The configuration the sandbox was started with.
    public let configuration: Configuration
    /// The port the sandbox listens on (the chosen one when configured with port 0).
    public let port: Int
    /// The PEM of the sandbox's TLS certificate, for a client to trust; nil for h2c.
    public let certificatePEM: String?

    private let state: NIOLockedValueBox<SandboxState>
    private let connections = NIOLockedValueBox<[Int: LiveConnection]>([:])
    private let tls: NIOLockedValueBox<TLSMaterial?>
    private let serverChannel = NIOLockedValueBox<(any Channel)?>(nil)
    private let logger: Logger

    private struct LiveConnection: Sendable {
        var channel: any Channel
        var root: NIOLoopBound<SandboxRootHandler>
    }

    private struct TLSMaterial: Sendable {
        var certificate: NIOSSLCertificate
        var key: NIOSSLPrivateKey
        var trustedClientCertificates: [NIOSSLCertificate]
        var context: NIOSSLContext
    }

    private init(configuration: Configuration, port: Int, certificatePEM: String?, tls: TLSMaterial?, logger: Logger) {
        self.configuration = configuration
        self.port = port
        self.certificatePEM = certificatePEM
        self.state = NIOLockedValueBox(SandboxState(configuration: configuration))
        self.tls = NIOLockedValueBox(tls)
        self.logger = logger
    }

    /// Binds and starts serving.
    public static func start(
        configuration: Configuration = Configuration(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "herald.apns-sandbox", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws -> APNsSandbox {
        var material: TLSMaterial?
        var certificatePEM: String?
        if configuration.transport == .tls {
            let identity = try LocalTLSIdentity.make(organization: "Herald APNs Sandbox")
            certificatePEM = identity.certificatePEM
            let certificate = try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)
            let key = try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem)
            material = TLSMaterial(
                certificate: certificate,
                key: key,
                trustedClientCertificates: [],
                context: try makeTLSContext(certificate: certificate, key: key, trusted: [])
            )
        }
        // The port is known only after binding: bind first, then hand channels to the sandbox.
        let box = NIOLockedValueBox<APNsSandbox?>(nil)
        let channel = try await ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                guard let sandbox = box.withLockedValue({ $0 }) else {
                    return channel.close()
                }
                return channel.eventLoop.makeCompletedFuture {
                    try sandbox.configure(channel)
                }
            }
            .bind(host: configuration.host, port: configuration.port)
            .get()
        let sandbox = APNsSandbox(
            configuration: configuration,
            port: channel.localAddress?.port ?? configuration.port,
            certificatePEM: certificatePEM,
            tls: material,
            logger: logger
        )
        sandbox.serverChannel.withLockedValue { $0 = channel }
        box.withLockedValue { $0 = sandbox }
        logger.info("APNs sandbox listening", metadata: ["apns_sandbox.port": "\(sandbox.port)"])
        return sandbox
    }

    /// Stops listening and closes every connection.
    public func shutdown() async {
        let channel = serverChannel.withLockedValue { value in
            defer { value = nil }
            return value
        }
        try? await channel?.close()
        await dropConnections()
    }

    private static func makeTLSContext(
        certificate: NIOSSLCertificate,
        key: NIOSSLPrivateKey,
        trusted: [NIOSSLCertificate]
    ) throws -> NIOSSLContext {
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        tls.applicationProtocols = ["h2"]
        tls.certificateVerification = .optionalVerification
        tls.trustRoots = .certificates(trusted)
        return try NIOSSLContext(configuration: tls)
    }

    private func configure(_ channel: any Channel) throws {
        if let context = tls.withLockedValue({ $0?.context }) {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
        }
        let connectionID = state.withLockedValue { state in
            defer { state.nextConnectionID += 1 }
            return state.nextConnectionID
        }
        let root = SandboxRootHandler(sandbox: self, connectionID: connectionID)
        let boundRoot = NIOLoopBound(root, eventLoop: channel.eventLoop)
        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        connectionConfiguration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: 1),
            HTTP2Setting(parameter: .maxHeaderListSize, value: HPACKDecoder.defaultMaxHeaderListSize),
        ]
        var streamConfiguration = NIOHTTP2Handler.StreamConfiguration()
        streamConfiguration.streamResetFrameRateLimit.maximumCount = 100_000
        // No stream multiplexer: the root handler sees every stream's frames.
        let http2 = NIOHTTP2Handler(mode: .server, connectionConfiguration: connectionConfiguration, streamConfiguration: streamConfiguration)
        try channel.pipeline.syncOperations.addHandlers([http2, root])
        connections.withLockedValue { $0[connectionID] = LiveConnection(channel: channel, root: boundRoot) }
        state.withLockedValue { $0.acceptedConnections += 1 }
    }

    func connectionClosed(_ connectionID: Int) {
        connections.withLockedValue { _ = $0.removeValue(forKey: connectionID) }
    }

    /// Decides requests in order under one turn of the lock, stopping after one that meets
    /// a GOAWAY (the rest are left unprocessed, as APNs would).
    func decide(_ requests: [SandboxRequest], connection: inout SandboxConnectionAuth) -> [SandboxDecision] {
        let now = configuration.now()
        return state.withLockedValue { state in
            var decisions: [SandboxDecision] = []
            decisions.reserveCapacity(requests.count)
            for request in requests {
                let decision = state.handle(request, connection: &connection, now: now)
                decisions.append(decision)
                if case .goAway = decision.action { break }
            }
            return decisions
        }
    }
}

extension APNsSandbox: Service {
    /// Serves until graceful shutdown or cancellation, then closes.
    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }
}

// MARK: - Registration and faults

extension APNsSandbox {
    /// Accepts provider tokens signed by this key for this team.
    public func registerSigningKey(keyID: String, teamID: String, publicKey: P256.Signing.PublicKey) {
        state.withLockedValue { $0.keys[keyID] = SandboxState.RegisteredKey(teamID: teamID, publicKey: publicKey) }
    }

    /// Accepts provider tokens signed by the key in this .p8 PEM for this team.
    public func registerSigningKey(keyID: String, teamID: String, privateKeyPEM: String) throws {
        registerSigningKey(keyID: keyID, teamID: teamID, publicKey: try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM).publicKey)
    }

    /// Accepts connections presenting this client certificate (certificate auth).
    /// Applies to connections opened afterwards.
    public func trustClientCertificate(pem: String) throws {
        let certificate = try NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem)
        try tls.withLockedValue { material in
            guard var current = material else { return }
            current.trustedClientCertificates.append(certificate)
            current.context = try Self.makeTLSContext(
                certificate: current.certificate,
                key: current.key,
                trusted: current.trustedClientCertificates
            )
            material = current
        }
    }

    /// Pins a device token to a topic: requests for another topic get DeviceTokenNotForTopic;
    /// and, with `environment`, to that APNs environment: a sandbox playing the other one
    /// answers BadDeviceToken.
    public func registerDevice(_ deviceToken: String, topic: String, environment: APNsEnvironment? = nil) {
        state.withLockedValue { state in
            state.deviceTopics[deviceToken.lowercased()] = topic
            state.deviceEnvironments[deviceToken.lowercased()] = environment
        }
    }

    /// Registers an ActivityKit token issued for `topic` (the bundle id): Live Activity
    /// pushes to it must use the `.push-type.liveactivity` topic and suit its kind, and no
    /// other push may go to it (DeviceTokenNotForTopic).
    public func registerLiveActivityToken(_ token: String, topic: String, kind: SandboxLiveActivityToken) {
        state.withLockedValue { state in
            state.deviceTopics[token.lowercased()] = topic
            state.liveActivityTokens[token.lowercased()] = kind
        }
    }

    /// Makes requests to this device answer 410 Unregistered with `since` as timestamp.
    public func markUnregistered(_ deviceToken: String, since: Date) {
        state.withLockedValue { $0.unregistered[deviceToken.lowercased()] = since }
    }

    /// Applies `fault` to every valid request for this device until cleared (nil).
    public func setFault(_ fault: SandboxFault?, forDevice deviceToken: String) {
        state.withLockedValue { $0.tokenFaults[deviceToken.lowercased()] = fault }
    }

    /// Applies `fault` to every valid request (whatever its device, unless the device has
    /// a fault of its own) until cleared (nil): an outage, such as every request answered
    /// 503 ServiceUnavailable.
    public func setFaultForEveryRequest(_ fault: SandboxFault?) {
        state.withLockedValue { $0.everyRequestFault = fault }
    }

    /// The fault every valid request meets, if one is set.
    public var faultForEveryRequest: SandboxFault? {
        state.withLockedValue { $0.everyRequestFault }
    }

    /// Applies these faults, in order, to the next valid requests.
    public func injectFaults(_ faults: [SandboxFault]) {
        state.withLockedValue { $0.queuedFaults.append(contentsOf: faults) }
    }

    /// Faults queued by ``injectFaults(_:)`` that no request has met yet.
    public var queuedFaultCount: Int {
        state.withLockedValue { $0.queuedFaults.count }
    }

    /// Once `count` notifications were accepted in all, the next request meets a GOAWAY
    /// with this reason on its connection.
    public func goAway(afterAccepting count: Int, reason: String) {
        state.withLockedValue { $0.goAwayAfter = (count, reason) }
    }

    /// Sends GOAWAY with this reason on every open connection now, then closes them.
    public func sendGoAway(reason: String) {
        for connection in connections.withLockedValue({ Array($0.values) }) {
            connection.channel.eventLoop.execute {
                connection.root.value.sendGoAway(reason: reason)
            }
        }
    }

    /// Closes every open connection without a word, as a network failure would, and
    /// returns once they are closed: a request sent afterwards cannot be served by one.
    public func dropConnections() async {
        let live = connections.withLockedValue { Array($0.values) }
        for connection in live {
            connection.channel.eventLoop.execute {
                connection.root.value.drop()
            }
        }
        for connection in live { try? await connection.channel.closeFuture.get() }
    }
}

// MARK: - Inspection

extension APNsSandbox {
    /// Every accepted notification, in order of arrival.
    public var notifications: [RecordedNotification] {
        state.withLockedValue { $0.records }
    }

    /// Every refused request, in order.
    public var rejections: [SandboxRejection] {
        state.withLockedValue { $0.rejections }
    }

    /// What the device with this token holds.
    public func notificationCentre(for deviceToken: String) -> DeviceNotificationCentre {
        state.withLockedValue { $0.centre(for: deviceToken.lowercased()) }
    }

    /// How many notifications were accepted since the start or the last ``clearRecords()``.
    public var acceptedCount: Int {
        state.withLockedValue { $0.records.count }
    }

    /// How many requests were refused since the start or the last ``clearRecords()``.
    public var rejectedCount: Int {
        state.withLockedValue { $0.rejections.count }
    }

    /// Forgets accepted notifications, rejections and every device's notification centre;
    /// returns how many notifications were forgotten. Keys, devices and faults stay.
    @discardableResult
    public func clearRecords() -> Int {
        state.withLockedValue { $0.clearRecords() }
    }

    /// How many connections were ever accepted.
    public var acceptedConnectionCount: Int {
        state.withLockedValue { $0.acceptedConnections }
    }

    /// How many connections are open now.
    public var openConnectionCount: Int {
        connections.withLockedValue { $0.count }
    }
}
