import HeraldStore
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A TCP proxy on 127.0.0.1 to `target` that a test can pause: a network link that drops
/// every packet for a while. While paused, what either side sends is held, on every
/// connection (new ones are accepted and held too), and delivered on ``resume()``, as TCP
/// retransmits once a cut link is back. Neither end sees an error: each just hears nothing.
public final class PausableTCPProxy: Sendable {
    private let server: any Channel
    private let target: SocketAddress
    private let state = NIOLockedValueBox(State())

    private struct State {
        var paused = false
        var forwarders: [ObjectIdentifier: Forwarder] = [:]
    }

    /// The proxy's port on 127.0.0.1.
    public var port: Int { server.localAddress!.port! }

    private init(server: any Channel, target: SocketAddress) {
        self.server = server
        self.target = target
    }

    /// Starts a proxy to `host`:`port`.
    public static func start(to host: String, port: Int) async throws -> PausableTCPProxy {
        let target = try SocketAddress.makeAddressResolvingHost(host, port: port)
        let box = NIOLockedValueBox<PausableTCPProxy?>(nil)
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                guard let proxy = box.withLockedValue({ $0 }) else { return inbound.close() }
                return proxy.connect(inbound)
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let proxy = PausableTCPProxy(server: server, target: target)
        box.withLockedValue { $0 = proxy }
        return proxy
    }

    /// Whether bytes are held rather than forwarded.
    var isPaused: Bool { state.withLockedValue { $0.paused } }

    /// Holds what either side sends, on every connection, until ``resume()``.
    public func pause() {
        state.withLockedValue { $0.paused = true }
    }

    /// Delivers what was held, and forwards what comes.
    public func resume() {
        let forwarders = state.withLockedValue { state in
            state.paused = false
            return Array(state.forwarders.values)
        }
        for forwarder in forwarders { forwarder.release() }
    }

    /// Closes the listener and every connection.
    public func stop() async {
        try? await server.close()
        let forwarders = state.withLockedValue { Array($0.forwarders.values) }
        for forwarder in forwarders { try? await forwarder.peer.close() }
    }

    private func connect(_ inbound: any Channel) -> EventLoopFuture<Void> {
        ClientBootstrap(group: inbound.eventLoop)
            .connect(to: target)
            .flatMap { outbound in
                let toTarget = Forwarder(to: outbound, proxy: self)
                let toClient = Forwarder(to: inbound, proxy: self)
                self.track(toTarget, closing: inbound)
                self.track(toClient, closing: outbound)
                return inbound.pipeline.addHandler(toTarget).flatMap { outbound.pipeline.addHandler(toClient) }
            }
    }

    private func track(_ forwarder: Forwarder, closing channel: any Channel) {
        let id = ObjectIdentifier(forwarder)
        state.withLockedValue { $0.forwarders[id] = forwarder }
        channel.closeFuture.whenComplete { _ in self.state.withLockedValue { _ = $0.forwarders.removeValue(forKey: id) } }
    }

    /// Writes what one side reads to the other (or holds it while the proxy is paused), and
    /// closes the other when one closes.
    private final class Forwarder: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        let peer: any Channel
        private let proxy: PausableTCPProxy
        /// What was read while paused; touched on the peer's event loop (the same as this side's).
        private var held: [ByteBuffer] = []

        init(to peer: any Channel, proxy: PausableTCPProxy) {
            self.peer = peer
            self.proxy = proxy
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data)
            if proxy.isPaused || !held.isEmpty {
                held.append(bytes)
            } else {
                peer.writeAndFlush(bytes, promise: nil)
            }
        }

        /// Sends on what was held, unless paused again.
        func release() {
            peer.eventLoop.execute {
                guard !self.proxy.isPaused else { return }
                for bytes in self.held { self.peer.write(bytes, promise: nil) }
                self.held.removeAll()
                self.peer.flush()
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            peer.close(promise: nil)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}

extension DatabaseURL {
    /// The same database, reached through `proxy`.
    public func through(_ proxy: PausableTCPProxy) -> DatabaseURL {
        var url = self
        url.host = "127.0.0.1"
        url.port = proxy.port
        return url
    }
}
