import Foundation
import HeraldMQTT
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// The device side of Herald: holds the MQTT connection, reconnects with jittered
/// backoff, acknowledges every delivery, and hands the app each message once.
///
/// ```swift
/// let client = HeraldClient(configuration: .init(host: "push.example.com", appKey: key), credentials: creds, logger: logger)
/// async let running: Void = client.run()
/// for await event in client.events { ... }
/// ```
public final class HeraldClient: Sendable {
    public struct Configuration: Sendable {
        /// The gateway's host and MQTT port.
        public var host: String
        public var port: Int
        /// The app key (the MQTT user name).
        public var appKey: String
        /// Seconds between keepalive pings.
        public var keepAlive: UInt16
        public var backoff: Backoff
        /// Connect over TLS (the gateway's TLS listener, port 8883 by default).
        public var tls: TLS?

        /// How the SDK verifies the gateway over TLS.
        public struct TLS: Sendable {
            /// PEM certificates to trust instead of the system's roots (a private CA).
            public var trustedCertificatesPEM: [String]?
            /// The name to verify the certificate against (and send as SNI); nil uses `host`.
            public var serverName: String?

            public init(trustedCertificatesPEM: [String]? = nil, serverName: String? = nil) {
                self.trustedCertificatesPEM = trustedCertificatesPEM
                self.serverName = serverName
            }
        }

        public init(
            host: String,
            port: Int = 1883,
            appKey: String,
            keepAlive: UInt16 = 60,
            backoff: Backoff = Backoff(),
            tls: TLS? = nil
        ) {
            self.host = host
            self.port = port
            self.appKey = appKey
            self.keepAlive = keepAlive
            self.backoff = backoff
            self.tls = tls
        }
    }

    /// What a device reports about itself.
    public enum Report: Sendable, Hashable {
        case opened(messageID: String)
        case clicked(messageID: String)
        case foreground
        case background
        /// The configuration version of a category the app now holds (``NotificationConfig``).
        case categoryVersion(category: String, version: Int64)

        static func jsonString(_ text: String) -> String {
            (try? JSONEncoder().encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
        }

        var json: String {
            switch self {
            case .categoryVersion(let category, let version):
                #"{"event":"category_version","category":\#(Self.jsonString(category)),"version":\#(version)}"#
            case .opened(let id): #"{"event":"opened","msg_id":"\#(id)"}"#
            case .clicked(let id): #"{"event":"clicked","msg_id":"\#(id)"}"#
            case .foreground: #"{"event":"foreground"}"#
            case .background: #"{"event":"background"}"#
            }
        }
    }

    /// Everything Herald sends the app, once each, in order.
    public let events: AsyncStream<HeraldEvent>
    private let continuation: AsyncStream<HeraldEvent>.Continuation
    private let configuration: Configuration
    private let credentials: DeviceCredentials
    private let logger: Logger
    private let deduplicator = NIOLockedValueBox(MessageDeduplicator())
    /// The MQTT connection's writer, and the reports not yet acknowledged; a writer is set
    /// only once no report waits, so reports reach the server in the order made.
    private let reports = NIOLockedValueBox<(writer: NIOAsyncChannelOutboundWriter<MQTTPacket>?, queue: ReportQueue)>((nil, ReportQueue()))

    public init(configuration: Configuration, credentials: DeviceCredentials, logger: Logger) {
        (events, continuation) = AsyncStream.makeStream(of: HeraldEvent.self, bufferingPolicy: .bufferingNewest(10_000))
        self.configuration = configuration
        self.credentials = credentials
        self.logger = logger
    }

    /// Connects, and reconnects after every loss, until the task is cancelled.
    public func run() async {
        var attempt = 0
        while !Task.isCancelled {
            do {
                try await connectOnce { attempt = 0 }
            } catch is CancellationError {
                break
            } catch {
                logger.debug("connection ended", metadata: ["error": "\(error)"])
            }
            continuation.yield(.disconnected)
            guard !Task.isCancelled else { break }
            let delay = configuration.backoff.delay(attempt: attempt)
            attempt += 1
            try? await Task.sleep(for: delay)
        }
        continuation.finish()
    }

    /// Reports an event of the device: sent now if connected, otherwise on the next
    /// connection, and sent again on the next one if Herald didn't acknowledge it.
    public func report(_ report: Report) async throws {
        let sending = reports.withLockedValue { reports -> (NIOAsyncChannelOutboundWriter<MQTTPacket>, ReportQueue.Numbered)? in
            guard let writer = reports.writer else {
                reports.queue.wait(report)
                return nil
            }
            return (writer, reports.queue.send(report))
        }
        guard let (writer, numbered) = sending else { return }
        // A failed write leaves the report unacknowledged: the next connection sends it.
        try? await writer.write(publish(numbered))
    }

    /// Sends the reports waiting for a connection, then lets new reports go straight out.
    private func flushWaitingReports(to outbound: NIOAsyncChannelOutboundWriter<MQTTPacket>) async throws {
        while true {
            let waiting = reports.withLockedValue { reports in
                let waiting = reports.queue.takeWaiting()
                if waiting.isEmpty { reports.writer = outbound }
                return waiting
            }
            if waiting.isEmpty { return }
            for numbered in waiting { try await outbound.write(publish(numbered)) }
        }
    }

    private func publish(_ numbered: ReportQueue.Numbered) -> MQTTPacket {
        .publish(
            .init(
                topic: "herald/\(credentials.registrationID)/events",
                payload: ByteBuffer(string: numbered.report.json),
                qos: .atLeastOnce,
                packetID: numbered.packetID,
                dup: numbered.again
            )
        )
    }

    private func connectOnce(onConnected: () -> Void) async throws {
        let sslContext = try configuration.tls.map { tls in
            var settings = TLSConfiguration.makeClientConfiguration()
            if let pems = tls.trustedCertificatesPEM {
                settings.trustRoots = .certificates(try pems.flatMap { try NIOSSLCertificate.fromPEMBytes(Array($0.utf8)) })
            }
            return try NIOSSLContext(configuration: settings)
        }
        let serverName = configuration.tls?.serverName ?? configuration.host
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: configuration.host, port: configuration.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        let isAddress = (try? SocketAddress(ipAddress: serverName, port: 0)) != nil
                        try channel.pipeline.syncOperations.addHandler(
                            try NIOSSLClientHandler(context: sslContext, serverHostname: isAddress ? nil : serverName)
                        )
                    }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(MQTTPacketDecoder(maximumPacketSize: 1 << 20)))
                    try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(MQTTPacketEncoder()))
                    return try NIOAsyncChannel<MQTTPacket, MQTTPacket>(wrappingChannelSynchronously: channel)
                }
            }
        try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(
                .connect(
                    .init(
                        clientID: credentials.registrationID,
                        cleanSession: false,
                        keepAlive: configuration.keepAlive,
                        username: configuration.appKey,
                        password: ByteBuffer(string: credentials.deviceSecret)
                    )
                )
            )
            var packets = inbound.makeAsyncIterator()
            guard case .connAck(let ack) = try await packets.next() else {
                throw HeraldClientError("the server did not answer CONNECT")
            }
            guard ack.returnCode == .accepted else { throw HeraldClientError("connection refused: \(ack.returnCode)") }
            onConnected()
            defer {
                reports.withLockedValue { reports in
                    reports.writer = nil
                    reports.queue.disconnected()
                }
            }
            try await flushWaitingReports(to: outbound)
            continuation.yield(.connected)

            try await withThrowingTaskGroup(of: Void.self) { group in
                let interval = Duration.seconds(Int(max(configuration.keepAlive, 1)))
                group.addTask {
                    while true {
                        try await Task.sleep(for: interval)
                        try await outbound.write(.pingReq)
                    }
                }
                while let packet = try await packets.next() {
                    switch packet {
                    case .publish(let publish): try await received(publish, outbound: outbound)
                    case .pubAck(let packetID): reports.withLockedValue { $0.queue.acknowledged(packetID) }
                    default: break
                    }
                }
                group.cancelAll()
            }
        }
    }

    private func received(_ publish: MQTTPacket.Publish, outbound: NIOAsyncChannelOutboundWriter<MQTTPacket>) async throws {
        if let payload = try? JSONDecoder().decode(PushPayload.self, from: Data(publish.payload.readableBytesView)) {
            if deduplicator.withLockedValue({ $0.firstTime(payload.msgID) }) {
                for event in payload.events(language: Locale.preferredLanguages.first) { continuation.yield(event) }
            }
        } else {
            logger.warning("ignoring a message that is not Herald JSON", metadata: ["herald.topic": "\(publish.topic)"])
        }
        if let id = publish.packetID { try await outbound.write(.pubAck(packetID: id)) }
    }
}
