import HeraldMQTT
import NIOCore
import NIOPosix
import PostgresNIO

/// Measures a device's move from one node to another (or, on a single node, a second
/// connection to the same node): with the device connected to the first node and its
/// session held there, it connects to the second. The takeover lasts from the new
/// connection's start until the new one is accepted (CONNACK 0) and the first node has
/// closed the old one, whichever comes later.
struct TakeoverProbe: Sendable {
    let sql: PostgresClient
    let username: String
    let password: String
    /// How long the device stays connected to the first node once its session is held there.
    let settle: Duration
    let timeout: Duration

    /// One move of `registrationID` from the node at `fromPort` (named `fromNode`) to the
    /// one at `toPort`: from the new connection's start until it was accepted, and until
    /// the old one was closed (the takeover is the later of the two).
    func measure(_ registrationID: String, fromPort: Int, fromNode: String, toPort: Int) async throws -> (accepted: Duration, closed: Duration) {
        let old = try await ProbeConnection.open(port: fromPort, clientID: registrationID, username: username, password: password)
        _ = try await withDeadline(timeout, "CONNACK on \(fromNode)") { try await old.accepted.get() }
        try await waitUntilHeld(registrationID, by: fromNode)
        if settle > .zero { try await Task.sleep(for: settle) }
        let started = ContinuousClock.now
        let new = try await ProbeConnection.open(port: toPort, clientID: registrationID, username: username, password: password)
        defer { new.close() }
        let accepted = try await withDeadline(timeout, "CONNACK of the new connection") { try await new.accepted.get() }
        let closed = try await withDeadline(timeout, "\(fromNode) to close the old connection") { try await old.closed.get() }
        return (accepted - started, closed - started)
    }

    /// Waits until the device's session names `node`: its connection there has claimed it.
    private func waitUntilHeld(_ registrationID: String, by node: String) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let rows = try await sql.query(
                """
                SELECT s.node_id FROM device_sessions s JOIN devices d ON d.id = s.device_id
                WHERE d.registration_id = \(registrationID)
                """
            )
            var holder: String?
            for try await nodeID in rows.decode(String?.self) { holder = nodeID }
            if holder == node { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw BenchError("\(registrationID) not held by \(node) within \(timeout)")
    }
}

/// A device's MQTT connection for the takeover measurement: CONNECT on open, PUBACK for
/// whatever comes; when it was accepted and when it closed, as instants on the event loop.
final class ProbeConnection: Sendable {
    let channel: any Channel
    let accepted: EventLoopFuture<ContinuousClock.Instant>
    let closed: EventLoopFuture<ContinuousClock.Instant>

    private init(channel: any Channel, accepted: EventLoopFuture<ContinuousClock.Instant>, closed: EventLoopFuture<ContinuousClock.Instant>) {
        self.channel = channel
        self.accepted = accepted
        self.closed = closed
    }

    static func open(port: Int, clientID: String, username: String, password: String) async throws -> ProbeConnection {
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let accepted = loop.makePromise(of: ContinuousClock.Instant.self)
        let closed = loop.makePromise(of: ContinuousClock.Instant.self)
        let connect = MQTTPacket.Connect(
            clientID: clientID,
            cleanSession: true,
            keepAlive: 60,
            username: username,
            password: ByteBuffer(string: password)
        )
        let channel = try await ClientBootstrap(group: loop)
            .connectTimeout(.seconds(5))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Handler(connect: connect, accepted: accepted, closed: closed))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        return ProbeConnection(channel: channel, accepted: accepted.futureResult, closed: closed.futureResult)
    }

    func close() {
        channel.close(promise: nil)
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        let connect: MQTTPacket.Connect
        let accepted: EventLoopPromise<ContinuousClock.Instant>
        let closed: EventLoopPromise<ContinuousClock.Instant>
        private var reader = MQTTPacketReader(maximumPacketSize: 1 << 20)
        private var answered = false

        init(connect: MQTTPacket.Connect, accepted: EventLoopPromise<ContinuousClock.Instant>, closed: EventLoopPromise<ContinuousClock.Instant>) {
            self.connect = connect
            self.accepted = accepted
            self.closed = closed
        }

        func channelActive(context: ChannelHandlerContext) {
            context.sendPacket(.connect(connect))
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            reader.append(unwrapInboundIn(data))
            do {
                while let packet = try reader.next() {
                    switch packet {
                    case .connAck(let ack) where !answered:
                        answered = true
                        if ack.returnCode == .accepted {
                            accepted.succeed(.now)
                        } else {
                            accepted.fail(BenchError("CONNECT refused: \(ack.returnCode)"))
                        }
                    case .publish(let publish):
                        if let id = publish.packetID { context.sendPacket(.pubAck(packetID: id)) }
                    default:
                        break
                    }
                }
            } catch {
                context.close(promise: nil)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            let now = ContinuousClock.now
            if !answered {
                answered = true
                accepted.fail(BenchError("connection closed before its CONNACK"))
            }
            closed.succeed(now)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }

    }
}
