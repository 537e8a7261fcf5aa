import Foundation
import HeraldMQTT
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Device connections for a benchmark: many MQTT clients in one process, each
/// acknowledging what it receives and recording how long each message took to arrive
/// (the payload starts with the sender's wall-clock time in nanoseconds).
final class LoadGenerator: Sendable {
    struct Device: Sendable {
        var clientID: String
        var username: String?
        var password: String?
        /// A topic to subscribe to (mosquitto needs one; Herald delivers regardless).
        var subscribe: String?
    }

    let connected = NIOLockedValueBox(0)
    let refused = NIOLockedValueBox(0)
    /// Connections the server (or the network) closed after they were up.
    let closed = NIOLockedValueBox(0)
    /// The keepalive each device's CONNECT asks for, in seconds.
    let keepAlive: UInt16
    let samples = NIOLockedValueBox<[Int64]>([])
    let lastReceipt = NIOLockedValueBox<Int64>(0)
    /// Whether each device keeps the msg_ids it received, to tell copies from duplicates
    /// (``copies``); off unless asked, as it costs the devices' CPU.
    let countsCopies: Bool
    /// Copies received since the last report, when counted.
    let copies = NIOLockedValueBox(CopyTally())
    private let channels = NIOLockedValueBox<[any Channel]>([])

    init(countsCopies: Bool = false, keepAlive: UInt16 = 900) {
        self.countsCopies = countsCopies
        self.keepAlive = keepAlive
    }

    /// Sends a PINGREQ on every connection.
    func pingAll() {
        for channel in channels.withLockedValue({ $0 }) where channel.isActive {
            channel.writeAndFlush(ByteBuffer(bytes: [0xC0, 0x00]), promise: nil)
        }
    }

    /// Opens every connection (at most `concurrency` handshakes at a time) from `sourceIP`.
    func connect(_ devices: [Device], host: String, port: Int, sourceIPs: [String], concurrency: Int = 256) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var index = 0
            var running = 0
            while index < devices.count || running > 0 {
                while running < concurrency, index < devices.count {
                    let device = devices[index]
                    let source = sourceIPs[index % sourceIPs.count]
                    index += 1
                    running += 1
                    group.addTask { try await self.openRetrying(device, host: host, port: port, sourceIP: source) }
                }
                try await group.next()
                running -= 1
            }
        }
    }

    /// Opens the device's connection; a CONNECT answered "server unavailable" (the
    /// database is slow to check credentials in a connection storm) is tried again after
    /// a second, as a device's client would, up to 30 times.
    private func openRetrying(_ device: Device, host: String, port: Int, sourceIP: String) async throws {
        for _ in 1..<30 {
            do {
                return try await open(device, host: host, port: port, sourceIP: sourceIP)
            } catch let refused as ConnectRefused where refused.code == .serverUnavailable {
                try await Task.sleep(for: .seconds(1))
            }
        }
        try await open(device, host: host, port: port, sourceIP: sourceIP)
    }

    struct ConnectRefused: Error {
        let code: MQTTPacket.ConnAck.ReturnCode
    }

    private func open(_ device: Device, host: String, port: Int, sourceIP: String) async throws {
        let ready = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Void.self)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(to: try SocketAddress(ipAddress: sourceIP, port: 0))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(DeviceHandler(generator: self, device: device, ready: ready))
                }
            }
            .connect(host: host, port: port).get()
        do {
            try await ready.futureResult.get()
        } catch {
            try? await channel.close()
            throw error
        }
        // Pinged from now on (``pingAll()``): a PINGREQ before the CONNACK breaks the protocol.
        channels.withLockedValue { $0.append(channel) }
    }

    func closeAll() async {
        for channel in channels.withLockedValue({ $0 }) { try? await channel.close() }
    }

    /// Latencies of the messages one read brought, received at `now`.
    fileprivate func received(_ latencies: [Int64], at now: Int64) {
        samples.withLockedValue { $0.append(contentsOf: latencies) }
        lastReceipt.withLockedValue { $0 = max($0, now) }
    }

    /// The copies one read brought.
    fileprivate func received(_ tally: CopyTally) {
        copies.withLockedValue { $0.add(tally) }
    }

    /// One device: answers each QoS 1 PUBLISH with its PUBACK and records its latency. It
    /// decodes with `MQTTPacketReader` and sends the PUBACKs of one read in one write, so
    /// the devices take as little of the machine as they can from the server measured.
    private final class DeviceHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        let generator: LoadGenerator
        let device: Device
        let ready: EventLoopPromise<Void>
        private var reader = MQTTPacketReader(maximumPacketSize: 1 << 20)
        private var acks: ByteBuffer?
        private var stamps: [Int64] = []
        /// The msg_ids received, when copies are counted, and this read's count.
        private var seen: Set<CopyKey> = []
        private var tally = CopyTally()

        init(generator: LoadGenerator, device: Device, ready: EventLoopPromise<Void>) {
            self.generator = generator
            self.device = device
            self.ready = ready
        }

        func channelActive(context: ChannelHandlerContext) {
            let connect = MQTTPacket.Connect(
                clientID: device.clientID,
                cleanSession: true,
                keepAlive: generator.keepAlive,
                username: device.username,
                password: device.password.map { ByteBuffer(string: $0) }
            )
            context.sendPacket(.connect(connect))
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            reader.append(unwrapInboundIn(data))
            do {
                while let packet = try reader.next() { handle(packet, context) }
            } catch {
                context.close(promise: nil)
            }
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            if let acks {
                self.acks = nil
                context.writeAndFlush(wrapOutboundOut(acks), promise: nil)
            }
            if !stamps.isEmpty {
                let now = WallClock.nanoseconds()
                generator.received(stamps.map { now - $0 }, at: now)
                stamps.removeAll(keepingCapacity: true)
            }
            if tally != CopyTally() {
                generator.received(tally)
                tally = CopyTally()
            }
        }

        private func handle(_ packet: MQTTPacket, _ context: ChannelHandlerContext) {
            switch packet {
            case .connAck(let ack):
                guard ack.returnCode == .accepted else {
                    generator.refused.withLockedValue { $0 += 1 }
                    ready.fail(ConnectRefused(code: ack.returnCode))
                    return
                }
                if let topic = device.subscribe {
                    context.sendPacket(.subscribe(.init(packetID: 1, subscriptions: [.init(topicFilter: topic, qos: .atLeastOnce)])))
                } else {
                    generator.connected.withLockedValue { $0 += 1 }
                    ready.succeed()
                }
            case .subAck:
                generator.connected.withLockedValue { $0 += 1 }
                ready.succeed()
            case .publish(let publish):
                if let id = publish.packetID {
                    if acks == nil { acks = context.channel.allocator.buffer(capacity: 64) }
                    acks!.writeBytes([0x40, 0x02, UInt8(id >> 8), UInt8(id & 0xFF)])
                }
                if let sentAt = WallClock.stamp(in: publish.payload) { stamps.append(sentAt) }
                if generator.countsCopies, let key = CopyKey.of(publish.payload) {
                    if seen.insert(key).inserted {
                        tally.distinct += 1
                    } else if publish.dup {
                        tally.redelivered += 1
                    } else {
                        tally.duplicates += 1
                    }
                }
            default:
                break
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            generator.closed.withLockedValue { $0 += 1 }
            ready.fail(BenchError("connection closed"))
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}

enum WallClock {
    /// Wall-clock nanoseconds: comparable across processes on one machine.
    static func nanoseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1_000_000_000).rounded())
    }

    /// The send time a payload carries: its first 19 bytes as digits (the gateway
    /// benchmark's payloads), else the 19 digits after the first `@t=` (a push's JSON).
    static func stamp(in payload: ByteBuffer) -> Int64? {
        payload.withUnsafeReadableBytes { bytes in
            if let stamp = digits(bytes, from: 0) { return stamp }
            // Scanned byte by byte: the devices share the machine with the server measured.
            guard bytes.count >= 3 else { return nil }
            for index in 0...(bytes.count - 3)
            where bytes[index] == UInt8(ascii: "@") && bytes[index + 1] == UInt8(ascii: "t") && bytes[index + 2] == UInt8(ascii: "=") {
                return digits(bytes, from: index + 3)
            }
            return nil
        }
    }

    /// The 19 digits at `start`, or nil.
    private static func digits(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int64? {
        guard bytes.count - start >= 19 else { return nil }
        var value: Int64 = 0
        for byte in bytes[start..<(start + 19)] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// A marker and the current time (19 digits), for a push's content.
    static func marker(_ nanoseconds: Int64) -> String {
        "@t=" + String(decoding: digits(nanoseconds), as: UTF8.self)
    }

    /// Writes ``marker(_:)`` into `buffer` without making a string.
    static func writeMarker(_ nanoseconds: Int64, into buffer: inout ByteBuffer) {
        buffer.writeStaticString("@t=")
        buffer.writeBytes(digits(nanoseconds))
    }

    /// A payload that starts with the current time (19 digits), padded to `size` bytes.
    static func stampedPayload(size: Int = 64) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(max(size, 19))
        buffer.writeBytes(digits(nanoseconds()))
        buffer.writeRepeatingByte(UInt8(ascii: " "), count: max(0, size - 19))
        return buffer
    }

    /// 19 digits, written by hand: String(format:) cost microseconds a message, which
    /// counted as Herald's (the benchmarks drive Herald in this process).
    private static func digits(_ value: Int64) -> [UInt8] {
        var value = value
        var digits = [UInt8](repeating: UInt8(ascii: "0"), count: 19)
        for index in (0..<19).reversed() {
            digits[index] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
        }
        return digits
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension ChannelHandlerContext {
    /// Writes and flushes one MQTT packet of a load generator's connection (whose outbound
    /// type is `ByteBuffer`); a packet that can't be encoded closes it.
    func sendPacket(_ packet: MQTTPacket) {
        var buffer = channel.allocator.buffer(capacity: 64)
        do {
            try MQTTPacketEncoder().write(packet, into: &buffer)
            writeAndFlush(NIOAny(buffer), promise: nil)
        } catch {
            close(promise: nil)
        }
    }
}
