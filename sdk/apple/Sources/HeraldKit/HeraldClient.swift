import Foundation
import HeraldMQTT
import Logging
import NIOConcurrencyHelpers
import NIOCore

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
    /// Carries out what arrives over the connection: each message once, whichever copy
    /// (this connection's, APNs') came first, shown by its presenter, receipts queued.
    public let arrivals: Arrivals
    /// The MQTT connection's writer, and the reports not yet acknowledged; a writer is set
    /// only once no report waits, so reports reach the server in the order made.
    private let reports = NIOLockedValueBox<(writer: NIOAsyncChannelOutboundWriter<MQTTPacket>?, queue: ReportQueue)>((nil, ReportQueue()))

    /// - Parameter arrivals: what carries out what arrives; its ledger is shared with the
    ///   APNs path (and, on iOS, the Notification Service Extension through an App Group
    ///   file), so each message is shown once whichever copy comes first. By default
    ///   nothing is shown: the app reads ``events``.
    public init(configuration: Configuration, credentials: DeviceCredentials, arrivals: Arrivals? = nil, logger: Logger) {
        self.arrivals = arrivals ?? Arrivals(ledger: InMemoryLedgerStore(), presenter: nil, logger: logger)
        (events, continuation) = AsyncStream.makeStream(of: HeraldEvent.self, bufferingPolicy: .bufferingNewest(10_000))
        self.configuration = configuration
        self.credentials = credentials
        self.logger = logger
    }

    /// What ``run()`` is told: by the app, the network, its connections and its timer.
    private enum Input: Sendable {
        case app(ConnectionPolicy.AppState)
        case network(available: Bool)
        case connected(Int)
        case ended(Int, ConnectionPolicy.Ending)
        case waited(Int)
    }

    private let inputs = NIOLockedValueBox<AsyncStream<Input>.Continuation?>(nil)
    /// The app's state before ``run()`` started (it starts in the foreground).
    private let initialAppState = NIOLockedValueBox(ConnectionPolicy.AppState.foreground)

    /// The app came to the foreground or went to the background: the connection is held
    /// in the foreground only (Apple suspends a background app's sockets; APNs reaches it).
    public func setAppState(_ state: ConnectionPolicy.AppState) {
        initialAppState.withLockedValue { $0 = state }
        inputs.withLockedValue { $0 }?.yield(.app(state))
    }

    /// The network changed (a path monitor's update): a wait to reconnect ends at once,
    /// and a connection that may be bound to the old path is replaced.
    public func networkChanged(available: Bool) {
        inputs.withLockedValue { $0 }?.yield(.network(available: available))
    }

    /// Holds the connection as ``ConnectionPolicy`` decides (in the foreground, reconnecting
    /// after every loss), until the task is cancelled or the gateway refuses the device for
    /// good, which ends the events with ``HeraldEvent/stopped(_:)``.
    public func run() async {
        let (stream, input) = AsyncStream.makeStream(of: Input.self)
        inputs.withLockedValue { $0 = input }
        var policy = ConnectionPolicy(appState: initialAppState.withLockedValue { $0 }, backoff: configuration.backoff)
        var connection: (id: Int, task: Task<Void, Never>)?
        var timer: Task<Void, Never>?
        func perform(_ action: ConnectionPolicy.Action) {
            switch action {
            case .none:
                break
            case .connect(let id):
                connection = (id, Task { await self.connection(id, input: input) })
            case .disconnect:
                connection?.task.cancel()
                connection = nil
                timer?.cancel()
            case .reconnect(let id):
                connection?.task.cancel()
                connection = (id, Task { await self.connection(id, input: input) })
            case .wait(let delay, let id):
                timer = Task {
                    try? await Task.sleep(for: delay)
                    input.yield(.waited(id))
                }
            case .stop(let refusal):
                logger.error("the gateway refused the device; not retrying", metadata: ["error": "\(refusal)"])
                continuation.yield(.stopped(refusal))
                input.finish()
            }
        }
        await withTaskCancellationHandler {
            perform(policy.start())
            for await event in stream {
                switch event {
                case .app(let state): perform(policy.appStateChanged(to: state))
                case .network(let available): perform(policy.networkChanged(available: available))
                case .connected(let id): perform(policy.connected(id))
                case .ended(let id, let ending): perform(policy.ended(id, ending))
                case .waited(let id): perform(policy.waited(id))
                }
            }
        } onCancel: {
            input.finish()
        }
        connection?.task.cancel()
        timer?.cancel()
        inputs.withLockedValue { $0 = nil }
        continuation.finish()
    }

    /// One connection, told back to ``run()`` as it is accepted and as it ends.
    private func connection(_ id: Int, input: AsyncStream<Input>.Continuation) async {
        var ending = ConnectionPolicy.Ending.lost
        do {
            try await connectOnce { input.yield(.connected(id)) }
        } catch let refused as ConnectionRefused {
            ending = .refused(refused.code)
        } catch {
            logger.debug("connection ended", metadata: ["error": "\(error)"])
        }
        continuation.yield(.disconnected)
        input.yield(.ended(id, ending))
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
        let channel = try await MQTTTransport.connect(configuration)
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
            guard ack.returnCode == .accepted else { throw ConnectionRefused(code: ack.returnCode) }
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
        // Carried out before it is acknowledged: a copy lost in between comes again.
        let events = await arrivals.receive(connectionPayload: publish.payload.readableBytesView, language: Locale.preferredLanguages.first)
        for event in events { continuation.yield(event) }
        if let id = publish.packetID { try await outbound.write(.pubAck(packetID: id)) }
    }
}

/// The gateway answered CONNECT with a refusal.
struct ConnectionRefused: Error {
    var code: MQTTPacket.ConnAck.ReturnCode
}
