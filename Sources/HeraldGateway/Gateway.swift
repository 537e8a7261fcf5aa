import Foundation
import HeraldMQTT
import HeraldStore
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization

/// The MQTT 3.1.1 gateway: devices hold their MQTT connections here, and Herald delivers
/// to them through ``deliver(_:to:ackTimeout:)``.
///
/// Every stored message is in the device's inbox before it is sent; acknowledged ones are
/// recorded (in batches); a device that reconnects is replayed, in order, what it hasn't
/// acknowledged and what hasn't expired. A second connection with the same client id
/// takes over from the first. On graceful shutdown it stops accepting, closes every
/// connection and writes the last acknowledgements.
public final class Gateway: Service, Sendable {
    let context: GatewayContext
    private let group: any EventLoopGroup
    private let listening: EventLoopPromise<SocketAddress>
    private let tlsListening: EventLoopPromise<SocketAddress>
    /// Where ``deliver(_:to:ackTimeout:)`` stores messages with a time to live.
    let inbox: InboxWriter
    /// Awaited before the gateway listens (the node joining its cluster).
    private let beforeListening: @Sendable () async -> Void

    public init(
        configuration: GatewayConfiguration,
        store: GatewayStore,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        onDeviceEvent: @escaping @Sendable (DeviceIdentity, ByteBuffer) -> Void = { _, _ in },
        beforeListening: @escaping @Sendable () async -> Void = {},
        logger: Logger
    ) {
        self.beforeListening = beforeListening
        let loops = Array(eventLoopGroup.makeIterator())
        var sweepers: [ObjectIdentifier: LoopSweeper] = [:]
        for (index, loop) in loops.enumerated() { sweepers[ObjectIdentifier(loop)] = LoopSweeper(eventLoop: loop, index: index) }
        self.context = GatewayContext(
            configuration: configuration,
            store: store,
            authenticator: DeviceAuthenticator(store: store, ttl: configuration.authCacheTTL),
            registry: ConnectionRegistry(),
            acks: AckRecorder(store: store, logger: logger),
            sessions: SessionBook(store: store, node: configuration.nodeID, logger: logger),
            metrics: GatewayMetrics(),
            sweepers: sweepers,
            lot: ParkingLot(loops: loops),
            onDeviceEvent: onDeviceEvent,
            logger: logger
        )
        self.inbox = InboxWriter(context: context)
        self.group = eventLoopGroup
        self.listening = eventLoopGroup.any().makePromise(of: SocketAddress.self)
        self.tlsListening = eventLoopGroup.any().makePromise(of: SocketAddress.self)
    }

    /// The address the gateway listens on, once it does.
    public var localAddress: SocketAddress {
        get async throws { try await listening.futureResult.get() }
    }

    /// Devices connected to this node.
    public var connectionCount: Int { context.registry.count }

    /// Connections parked without a channel (``GatewayConfiguration/parkAfter``), counted
    /// in ``connectionCount`` too.
    public var parkedCount: Int { context.lot.count }

    /// Whether a device is connected to this node.
    public func isConnected(_ registrationID: String) -> Bool {
        context.registry.connection(registrationID) != nil
    }

    /// Another node claimed the session of `registrationID` with `epoch` (its NOTIFY): the
    /// connection here closes, unless it is newer.
    public func sessionClaimedElsewhere(registrationID: String, epoch: Int64) {
        let key = RegistrationKey(registrationID)
        guard let handle = context.registry.connection(key) else { return }
        context.withConnection(handle, key: key) { $0.sessionClaimedElsewhere(epoch: epoch) }
    }

    /// Another node stored messages in the inbox of `registrationID` (a recall command):
    /// its connection here, if any, loads them.
    public func inboxChanged(registrationID: String) {
        let key = RegistrationKey(registrationID)
        guard let handle = context.registry.connection(key) else { return }
        context.withConnection(handle, key: key) { $0.inboxChanged() }
    }

    /// Tells every connected device to read its inbox on, `rate` devices a second: after
    /// this node's LISTEN connection was lost, another node's NOTIFY that it stored copies
    /// for a device here may have been lost with it, and without this the copies would
    /// wait for the device's next push or connection.
    public func inboxesMayHaveChanged(rate: Int = 5000) {
        let perTick = max(1, rate / 10 / max(1, context.sweepers.count))
        for sweeper in context.sweepers.values { sweeper.inboxesMayHaveChanged(perTick: perTick, context) }
    }

    /// Closes the connections whose devices a newer connection has claimed since: the
    /// check that doesn't depend on the NOTIFY of ``sessionClaimedElsewhere(registrationID:epoch:)``
    /// arriving. Returns how many it closed.
    @discardableResult
    public func closeSupersededSessions() async throws -> Int {
        var handles: [Int64: (key: RegistrationKey, handle: ConnectionHandle)] = [:]
        for (key, handle) in context.registry.all() where handle.epoch != nil { handles[handle.deviceID] = (key, handle) }
        guard !handles.isEmpty else { return 0 }
        let superseded = try await context.store.supersededSessions(
            handles.values.map { SessionEpoch(deviceID: $0.handle.deviceID, epoch: $0.handle.epoch!) }
        )
        for session in superseded {
            guard let (key, handle) = handles[session.deviceID] else { continue }
            context.withConnection(handle, key: key) { $0.sessionClaimedElsewhere(epoch: session.epoch) }
        }
        return superseded.count
    }

    /// Closes every connection at once: this node was declared dead (it stopped, then woke
    /// up), and its devices belong to other nodes now, or will when they reconnect. What
    /// the connections write as they close names their epochs, so it changes nothing about
    /// a device claimed since.
    public func closeAllFenced() async {
        for sweeper in context.sweepers.values { _ = try? await sweeper.closeAll(context).get() }
    }

    /// While `refused`, every CONNECT is answered "server unavailable" (return code 3):
    /// the node is cut off from the database its peers still reach, so a device that
    /// connects here could be given nothing, and its client should try another node.
    public func refuseSessions(_ refused: Bool) {
        context.refusesSessions.store(refused, ordering: .relaxed)
    }

    /// Closes every connection, `rate` a second: a tenth of a second's worth at a time,
    /// taken from the event loops in turn.
    private func drain(rate: Int) async {
        let sweepers = Array(context.sweepers.values)
        let clock = ContinuousClock()
        var next = clock.now
        var allowance = 0.0
        while true {
            allowance += Double(rate) / 10
            var budget = Int(allowance)
            allowance -= Double(budget)
            var open = 0
            for sweeper in sweepers {
                let (closed, left) = (try? await sweeper.close(atMost: budget, context).get()) ?? (0, 0)
                budget -= closed
                open += left
            }
            if open == 0 { return }
            context.logger.debug("draining", metadata: ["herald.open": "\(open)"])
            next = next.advanced(by: .milliseconds(100))
            try? await clock.sleep(until: next)
        }
    }

    /// The address of the TLS listener, once it listens (only when TLS is configured).
    public var tlsLocalAddress: SocketAddress {
        get async throws { try await tlsListening.futureResult.get() }
    }

    /// Bytes a connection reads at a time. A device sends small packets (PUBACKs of 4
    /// bytes, a CONNECT of about a hundred), and the channel keeps its read buffer between
    /// reads: a fixed size keeps that buffer small, and a fixed-size allocator (one word)
    /// is stored in the channel without the box an adaptive one needs (48 bytes each).
    static let readSize = 128

    /// A connection's outbound buffer: past `high` it is unwritable (the slow-consumer rule).
    static let writeBufferWaterMark = ChannelOptions.Types.WriteBufferWaterMark(low: 32 * 1024, high: 64 * 1024)

    private func bind(host: String, port: Int, tls: NIOSSLContext?) async throws -> any Channel {
        let context = self.context
        let configuration = context.configuration
        return try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.maxMessagesPerRead, value: UInt(configuration.acceptsPerTick))
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.writeBufferWaterMark, value: Self.writeBufferWaterMark)
            .childChannelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: Self.readSize))
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                    }
                    try channel.pipeline.syncOperations.addHandler(MQTTConnectionHandler(context: context, parkable: tls == nil))
                }
            }
            .bind(host: host, port: port)
            .get()
    }

    public func run() async throws {
        let context = self.context
        let configuration = context.configuration
        let server: any Channel
        var tlsServer: (any Channel)?
        await beforeListening()
        do {
            server = try await bind(host: configuration.host, port: configuration.port, tls: nil)
            if let tls = configuration.tls {
                var settings = TLSConfiguration.makeServerConfiguration(
                    certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(tls.certificateChainPEM.utf8)).map { .certificate($0) },
                    privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(tls.privateKeyPEM.utf8), format: .pem))
                )
                settings.minimumTLSVersion = .tlsv12
                let sslContext = try NIOSSLContext(configuration: settings)
                tlsServer = try await bind(host: tls.host, port: tls.port, tls: sslContext)
            }
        } catch {
            listening.fail(error)
            tlsListening.fail(error)
            throw error
        }
        if let address = server.localAddress { listening.succeed(address) }
        if let address = tlsServer?.localAddress {
            tlsListening.succeed(address)
            context.logger.info("MQTT over TLS listening", metadata: ["herald.mqtt.tls_address": "\(address)"])
        } else {
            tlsListening.fail(ChannelError.inappropriateOperationForState)
        }
        context.logger.info("MQTT gateway listening", metadata: ["herald.mqtt.address": "\(server.localAddress?.description ?? "?")"])
        let sweeps = context.sweepers.values.map { $0.start() }
        context.lot.start { loop, ticket, reason in
            loop.execute { context.wake(ticket, reason) }
        }
        defer { context.lot.stop() }

        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await context.acks.flushPeriodically() }
            group.addTask { await context.tasks.run() }
            try? await gracefulShutdown()
            // Stop accepting, close every connection (at `drainRate` a second, so the devices
            // reconnect to other nodes without a thundering herd), then let the recorder
            // write the last acks.
            try? await server.close()
            try? await tlsServer?.close()
            await drain(rate: configuration.drainRate)
            for _ in 0..<50 {
                var open = 0
                for sweeper in context.sweepers.values { open += (try? await sweeper.count(context).get()) ?? 0 }
                if open == 0 { break }
                try? await Task.sleep(for: .milliseconds(20))
            }
            for sweep in sweeps { sweep.cancel() }
            context.tasks.finish()
            group.cancelAll()
        }
        await context.acks.flush()
    }
}
