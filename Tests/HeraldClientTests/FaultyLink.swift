import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A TCP relay between a device and the real gateway that can do what a mobile network
/// does: lose what the device sends, and cut the connection.
final class FaultyLink: Sendable {
    private let server: any Channel
    private let state: NIOLockedValueBox<State>

    private struct State {
        var losesDeviceBytes = false
        var connections: [any Channel] = []
    }

    /// The port devices connect to.
    let port: Int

    private init(server: any Channel, state: NIOLockedValueBox<State>) throws {
        self.server = server
        self.state = state
        guard let port = server.localAddress?.port else { throw LinkError() }
        self.port = port
    }

    /// Relays connections on a free local port to `upstream`.
    static func start(to upstream: SocketAddress) async throws -> FaultyLink {
        let state = NIOLockedValueBox(State())
        let loses: @Sendable () -> Bool = { state.withLockedValue { $0.losesDeviceBytes } }
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelOption(.autoRead, value: false)
            .childChannelInitializer { device in
                ClientBootstrap(group: device.eventLoop)
                    .channelInitializer { gateway in
                        gateway.pipeline.addHandler(Relay(to: device, loses: { false }))
                    }
                    .connect(to: upstream)
                    .flatMap { gateway in
                        state.withLockedValue { $0.connections += [device, gateway] }
                        return device.pipeline.addHandler(Relay(to: gateway, loses: loses))
                            .flatMap { device.setOption(.autoRead, value: true) }
                    }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return try FaultyLink(server: server, state: state)
    }

    /// From now on, what devices send is dropped (or, with false, relayed again).
    func losesDeviceBytes(_ loses: Bool) {
        state.withLockedValue { $0.losesDeviceBytes = loses }
    }

    /// Closes every relayed connection, on both sides.
    func cutConnections() async {
        let connections = state.withLockedValue { state in
            defer { state.connections = [] }
            return state.connections
        }
        for connection in connections { try? await connection.close() }
    }

    func close() async {
        await cutConnections()
        try? await server.close()
    }

    private struct LinkError: Error {}

    /// Writes what one side reads to the other side, unless it is being lost.
    private final class Relay: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer

        private let partner: any Channel
        private let loses: @Sendable () -> Bool

        init(to partner: any Channel, loses: @escaping @Sendable () -> Bool) {
            self.partner = partner
            self.loses = loses
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !loses() else { return }
            partner.writeAndFlush(Self.unwrapInboundIn(data), promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            partner.close(promise: nil)
            context.fireChannelInactive()
        }
    }
}
