import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// One HTTP/2 connection to APNs.
///
/// Senders on any thread queue their requests here; the first one into an empty queue
/// schedules one event-loop task that writes everything queued by then with one flush, so
/// a busy connection costs one wake-up and one TLS write per batch, not per request.
final class APNsConnection: Sendable {
    let id: Int
    let channel: any Channel
    private let streams: NIOLoopBound<APNsStreamsHandler>
    private let queued = NIOLockedValueBox<[APNsRequest]>([])

    private init(id: Int, channel: any Channel, streams: NIOLoopBound<APNsStreamsHandler>) {
        self.id = id
        self.channel = channel
        self.streams = streams
    }

    /// Connects, completes TLS (ALPN h2) or h2c, and waits for the peer's first SETTINGS.
    static func connect(
        id: Int,
        configuration: APNsClient.Configuration,
        sslContext: NIOSSLContext?,
        events: APNsConnectionEvents
    ) async throws -> APNsConnection {
        let group = configuration.eventLoopGroup
        let eventLoop = group.next()
        let ready = eventLoop.makePromise(of: Void.self)
        let serverHostname = configuration.tlsServerName ?? (Self.isIPAddress(configuration.host) ? nil : configuration.host)
        let pingInterval = TimeAmount(configuration.pingInterval)
        let pingTimeout = TimeAmount(configuration.pingTimeout)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: eventLoop)
                .connectTimeout(TimeAmount(configuration.connectTimeout))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let sslContext {
                            let tls = try NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname)
                            try channel.pipeline.syncOperations.addHandler(tls)
                        }
                        var connection = NIOHTTP2Handler.ConnectionConfiguration()
                        connection.initialSettings = [
                            HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
                            HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
                        ]
                        connection.targetWindowSize = 1 << 24
                        // The client builds every request's headers itself and reads two
                        // headers of the answer: checking each block against RFC 9113's
                        // field rules was several percent of its cost at APNs rates.
                        connection.headerBlockValidation = .disabled
                        connection.contentLengthValidation = .disabled
                        let http2 = NIOHTTP2Handler(mode: .client, connectionConfiguration: connection)
                        let handler = APNsConnectionHandler(events: events, ready: ready, pingInterval: pingInterval, pingTimeout: pingTimeout)
                        try channel.pipeline.syncOperations.addHandlers([http2, APNsStreamsHandler(), handler])
                    }
                }
                .connect(host: configuration.host, port: configuration.port)
                .get()
        } catch {
            ready.fail(error)
            throw error
        }
        let timeout = eventLoop.scheduleTask(in: TimeAmount(configuration.connectTimeout)) {
            ready.fail(APNsError(.deadlineExceeded, detail: "no SETTINGS from the peer"))
        }
        do {
            try await ready.futureResult.get()
            timeout.cancel()
            let streams = try await channel.pipeline.handler(type: APNsStreamsHandler.self).map {
                NIOLoopBound($0, eventLoop: channel.eventLoop)
            }.get()
            return APNsConnection(id: id, channel: channel, streams: streams)
        } catch {
            timeout.cancel()
            channel.close(promise: nil)
            throw error
        }
    }

    /// Sends one request on a new stream and waits for the answer or the deadline.
    func execute(headers: HPACKHeaders, body: [UInt8], deadline: NIODeadline) async throws -> APNsResponse {
        let promise = channel.eventLoop.makePromise(of: APNsResponse.self)
        let request = APNsRequest(headers: headers, body: channel.allocator.buffer(bytes: body), deadline: deadline, promise: promise)
        let first = queued.withLockedValue { queue in
            queue.append(request)
            return queue.count == 1
        }
        if first {
            channel.eventLoop.execute { [self] in
                let requests = queued.withLockedValue { queue in
                    defer { queue.removeAll(keepingCapacity: true) }
                    return queue
                }
                streams.value.start(requests)
            }
        }
        return try await promise.futureResult.get()
    }

    func close() {
        channel.close(promise: nil)
    }

    private static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
