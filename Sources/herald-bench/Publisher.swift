import HeraldMQTT
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A QoS 1 publisher for the peer broker: keeps up to `window` PUBLISHes unacknowledged.
final class Publisher: Sendable {
    private let channel: any Channel
    private let state: NIOLockedValueBox<(next: UInt16, outstanding: Int, waiters: [CheckedContinuation<Void, Never>])>
    let window: Int

    private init(
        channel: any Channel,
        state: NIOLockedValueBox<(next: UInt16, outstanding: Int, waiters: [CheckedContinuation<Void, Never>])>,
        window: Int
    ) {
        self.channel = channel
        self.state = state
        self.window = window
    }

    static func connect(host: String, port: Int, window: Int = 1000) async throws -> Publisher {
        let state = NIOLockedValueBox<(next: UInt16, outstanding: Int, waiters: [CheckedContinuation<Void, Never>])>((1, 0, []))
        let connected = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Void.self)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(MQTTPacketDecoder(maximumPacketSize: 1 << 20)))
                    try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(MQTTPacketEncoder()))
                    try channel.pipeline.syncOperations.addHandler(AckHandler(state: state, connected: connected))
                }
            }
            .connect(host: host, port: port).get()
        try await channel.writeAndFlush(MQTTPacket.connect(.init(clientID: "herald-bench-publisher", cleanSession: true, keepAlive: 900)))
        try await connected.futureResult.get()
        return Publisher(channel: channel, state: state, window: window)
    }

    func publish(topic: String, payload: ByteBuffer) async throws {
        while true {
            let admitted = state.withLockedValue { state -> UInt16? in
                guard state.outstanding < window else { return nil }
                state.outstanding += 1
                defer { state.next = state.next == .max ? 1 : state.next + 1 }
                return state.next
            }
            if let id = admitted {
                channel.writeAndFlush(MQTTPacket.publish(.init(topic: topic, payload: payload, qos: .atLeastOnce, packetID: id)), promise: nil)
                return
            }
            await withCheckedContinuation { continuation in
                let ready = state.withLockedValue { state -> Bool in
                    if state.outstanding < window { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    /// Waits until every PUBLISH was acknowledged.
    func drain() async throws {
        while state.withLockedValue({ $0.outstanding }) > 0 { try await Task.sleep(for: .milliseconds(5)) }
    }

    func close() async { try? await channel.close() }

    private final class AckHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = MQTTPacket
        let state: NIOLockedValueBox<(next: UInt16, outstanding: Int, waiters: [CheckedContinuation<Void, Never>])>
        let connected: EventLoopPromise<Void>

        init(
            state: NIOLockedValueBox<(next: UInt16, outstanding: Int, waiters: [CheckedContinuation<Void, Never>])>,
            connected: EventLoopPromise<Void>
        ) {
            self.state = state
            self.connected = connected
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .connAck: connected.succeed()
            case .pubAck:
                let waiters = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
                    state.outstanding -= 1
                    defer { state.waiters = [] }
                    return state.waiters
                }
                for waiter in waiters { waiter.resume() }
            default: break
            }
        }
    }
}
