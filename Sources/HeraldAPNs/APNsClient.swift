import Foundation
import HeraldCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import ServiceLifecycle

/// The APNs provider for one app's credentials in one environment.
///
/// A long-lived `Service`: `run()` owns a pool of HTTP/2 connections (reconnecting with
/// backoff), and ``send(_:)`` pipelines notifications over them, each with a deadline.
/// Token auth shares one JWT across every connection and never changes the token of a
/// connection within 20 minutes of its last change.
public final class APNsClient: Service, Sendable {
    public let configuration: Configuration
    public let credentials: APNsCredentials

    let logger: Logger
    let pool: APNsConnectionPool
    let tokens: APNsTokenStore?
    let tokenPolicy: APNsTokenPolicy
    let metrics: APNsMetrics
    let circuit: NIOLockedValueBox<APNsCircuitBreaker>
    private let sslContext: NIOSSLContext?
    private let problem = NIOLockedValueBox<APNsReason?>(nil)
    private let goAwayReason = NIOLockedValueBox<String?>(nil)
    private let connectionIDs = NIOLockedValueBox(0)

    /// - Parameters:
    ///   - credentials: the app's token or certificate credentials.
    ///   - configuration: where APNs is and how hard to push.
    ///   - logger: used for connection and credential events, with `apns.*` metadata.
    ///   - tokens: the provider tokens of the credentials' key, when other clients (the
    ///     app's other environment) use the same key: one token per key, shared by all.
    ///     Nil makes the client its own.
    public init(credentials: APNsCredentials, configuration: Configuration, logger: Logger, tokens: APNsTokenStore? = nil) throws {
        self.credentials = credentials
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: "apns.bundle_id"] = "\(credentials.bundleID)"
        self.logger = logger
        self.tokenPolicy = APNsTokenPolicy()
        self.metrics = APNsMetrics(bundleID: credentials.bundleID)
        self.pool = APNsConnectionPool(streamCap: configuration.maxStreamsPerConnection, eventLoop: configuration.eventLoopGroup.next())
        self.circuit = NIOLockedValueBox(APNsCircuitBreaker(configuration: configuration.circuitBreaker, probeTimeout: configuration.requestTimeout))

        var tls: TLSConfiguration?
        switch configuration.transport {
        case .plaintext:
            tls = nil
        case .tls:
            tls = TLSConfiguration.makeClientConfiguration()
        case .tlsTrusting(let pems):
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.trustRoots = .certificates(try pems.map { try NIOSSLCertificate(bytes: Array($0.utf8), format: .pem) })
            tls = configuration
        }
        tls?.applicationProtocols = ["h2"]
        do {
            switch credentials.auth {
            case .token(let keyID, let teamID, let privateKeyPEM):
                if let tokens, tokens.signs(keyID: keyID, teamID: teamID, privateKeyPEM: privateKeyPEM) {
                    self.tokens = tokens
                } else {
                    self.tokens = try APNsTokenStore(keyID: keyID, teamID: teamID, privateKeyPEM: privateKeyPEM, now: configuration.now)
                }
            case .certificate(let certificatePEM, let privateKeyPEM):
                self.tokens = nil
                tls?.certificateChain = try NIOSSLCertificate.fromPEMBytes(Array(certificatePEM.utf8)).map { .certificate($0) }
                tls?.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem))
            }
        } catch {
            throw APNsError(.invalidCredentials, detail: "\(error)")
        }
        self.sslContext = try tls.map { try NIOSSLContext(configuration: $0) }
    }

    /// Keeps the pool's connections up until graceful shutdown or cancellation.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for slot in 0..<self.configuration.connectionCount {
                    group.addTask { await self.maintainConnection(slot: slot) }
                }
            }
        }
        pool.shutdown()
    }

    /// Why the client stopped sending for this app, if it did: APNs refused the
    /// credentials. Replace the client with one holding new credentials.
    public var credentialsProblem: APNsReason? {
        problem.withLockedValue { $0 }
    }

    /// The reason of the last GOAWAY APNs sent, if any.
    public var lastGoAwayReason: String? {
        goAwayReason.withLockedValue { $0 }
    }

    /// How many connections are up and taking streams.
    public var openConnectionCount: Int {
        pool.openConnectionCount
    }

    /// Whether the circuit is open: APNs kept answering 5xx and sends return
    /// ``APNsOutcome/circuitOpen(reason:after:)`` without a request.
    public var isCircuitOpen: Bool {
        circuit.withLockedValue { $0.isOpen }
    }

    /// How many provider tokens were signed so far (token auth).
    public var signedTokenCount: Int {
        tokens?.signedCount ?? 0
    }

    func credentialsBroken(_ reason: APNsReason) {
        let first = problem.withLockedValue { problem in
            defer { problem = problem ?? reason }
            return problem == nil
        }
        if first {
            pool.refuse()
            metrics.markCredentialsBroken()
            logger.error("APNs refused the app's credentials; sending stopped for this app", metadata: ["apns.reason": "\(reason)"])
        }
    }

    /// One slot of the pool: connect, serve until the connection closes, reconnect.
    private func maintainConnection(slot: Int) async {
        var failures = 0
        while !Task.isCancelled {
            let id = connectionIDs.withLockedValue { id in
                id += 1
                return id
            }
            let logger = {
                var logger = self.logger
                logger[metadataKey: "apns.connection_id"] = "\(id)"
                return logger
            }()
            let pool = self.pool
            let events = APNsConnectionEvents(
                settings: { pool.settingsReceived(id, maxConcurrentStreams: $0) },
                goAway: { [self] reason in
                    goAwayReason.withLockedValue { $0 = reason ?? "" }
                    logger.notice("APNs sent GOAWAY", metadata: ["apns.reason": "\(reason ?? "")"])
                    pool.drain(id)
                }
            )
            do {
                let connection = try await APNsConnection.connect(
                    id: id,
                    configuration: configuration,
                    sslContext: sslContext,
                    events: events
                )
                failures = 0
                logger.debug("APNs connection ready", metadata: ["apns.slot": "\(slot)"])
                pool.added(connection, tokenAuth: tokens != nil)
                await withTaskCancellationHandler {
                    try? await connection.channel.closeFuture.get()
                } onCancel: {
                    connection.close()
                }
                pool.removed(id)
                logger.debug("APNs connection closed")
            } catch {
                failures += 1
                logger.warning("APNs connection failed", metadata: ["apns.error": "\(error)", "apns.failures": "\(failures)"])
            }
            if failures > 0 {
                let (minimum, maximum) = configuration.reconnectBackoff
                let backoff = min(minimum * (1 << min(failures - 1, 16)), maximum)
                try? await Task.sleep(for: backoff)
            }
        }
    }
}
