import Foundation
import HeraldMQTT
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A bare MQTT client for tests: sends packets as given and records what arrives.
public final class TestMQTTClient: Sendable {
    public let channel: any Channel
    private let received: NIOLockedValueBox<[MQTTPacket]>

    private init(channel: any Channel, received: NIOLockedValueBox<[MQTTPacket]>) {
        self.channel = channel
        self.received = received
    }

    public static func connect(to address: SocketAddress) async throws -> TestMQTTClient {
        let received = NIOLockedValueBox<[MQTTPacket]>([])
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(MQTTPacketDecoder(maximumPacketSize: 1 << 20)))
                    try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(MQTTPacketEncoder()))
                    try channel.pipeline.syncOperations.addHandler(Collector(received: received))
                }
            }
            .connect(to: address).get()
        return TestMQTTClient(channel: channel, received: received)
    }

    /// Connects and sends CONNECT; returns the CONNACK's return code.
    public static func connect(
        to address: SocketAddress,
        clientID: String,
        username: String?,
        password: String?,
        keepAlive: UInt16 = 60
    ) async throws -> (TestMQTTClient, MQTTPacket.ConnAck.ReturnCode?) {
        let client = try await connect(to: address)
        let code = try await client.sendConnect(clientID: clientID, username: username, password: password, keepAlive: keepAlive)
        return (client, code)
    }

    public func sendConnect(
        clientID: String,
        username: String?,
        password: String?,
        keepAlive: UInt16 = 60
    ) async throws -> MQTTPacket.ConnAck.ReturnCode? {
        try await send(
            .connect(
                .init(
                    clientID: clientID,
                    cleanSession: true,
                    keepAlive: keepAlive,
                    username: username,
                    password: password.map { ByteBuffer(string: $0) }
                )
            )
        )
        guard case .connAck(let ack) = try await next() else { return nil }
        return ack.returnCode
    }

    public func send(_ packet: MQTTPacket) async throws {
        try await channel.writeAndFlush(packet)
    }

    public func sendRaw(_ bytes: [UInt8]) async throws {
        // Bypass the encoder: write bytes below it.
        try await channel.pipeline.context(handlerType: MessageToByteHandler<MQTTPacketEncoder>.self).flatMap { context in
            context.writeAndFlush(NIOAny(ByteBuffer(bytes: bytes)))
        }.get()
    }

    /// The next packet received, waiting up to `timeout`; nil when none came (or the connection closed).
    public func next(timeout: Duration = .seconds(5)) async throws -> MQTTPacket? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let packet = received.withLockedValue({ $0.isEmpty ? nil : $0.removeFirst() }) { return packet }
            if !channel.isActive, received.withLockedValue({ $0.isEmpty }) { return nil }
            try await Task.sleep(for: .milliseconds(5))
        }
        // A pause of the whole process past the deadline must not lose a packet that came.
        return received.withLockedValue { $0.isEmpty ? nil : $0.removeFirst() }
    }

    /// The next PUBLISH, acknowledging it unless told not to.
    public func nextPublish(acknowledge: Bool = true, timeout: Duration = .seconds(5)) async throws -> MQTTPacket.Publish? {
        while let packet = try await next(timeout: timeout) {
            guard case .publish(let publish) = packet else { continue }
            if acknowledge, let id = publish.packetID { try await send(.pubAck(packetID: id)) }
            return publish
        }
        return nil
    }

    /// Waits until the server closes the connection; true if it did within `timeout`.
    public func waitForClose(timeout: Duration = .seconds(10)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if !channel.isActive { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    public func close() async {
        try? await channel.close()
    }

    private final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = MQTTPacket
        let received: NIOLockedValueBox<[MQTTPacket]>
        init(received: NIOLockedValueBox<[MQTTPacket]>) { self.received = received }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let packet = unwrapInboundIn(data)
            received.withLockedValue { $0.append(packet) }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
