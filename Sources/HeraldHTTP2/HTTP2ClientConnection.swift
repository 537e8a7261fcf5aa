import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// One HTTP/2 client connection carrying many requests at once (``HTTP2StreamsHandler``).
///
/// Senders on any thread queue their requests here; the first one into an empty queue
/// schedules one event-loop task that writes everything queued by then with one flush, so
/// a busy connection costs one wake-up and one TLS write per batch, not per request.
public final class HTTP2ClientConnection: Sendable {
    public let channel: any Channel
    private let streams: NIOLoopBound<HTTP2StreamsHandler>
    private let queued = NIOLockedValueBox<[HTTP2Request]>([])

    private init(channel: any Channel, streams: NIOLoopBound<HTTP2StreamsHandler>) {
        self.channel = channel
        self.streams = streams
    }

    /// Connects, completes TLS (ALPN h2; `sslContext` nil: h2c), and waits for the peer's
    /// first SETTINGS. `rootHandler`: handles the root stream's frames after the streams
    /// handler (the peer's SETTINGS, GOAWAY, PING), given the promise to succeed at the
    /// first SETTINGS; nil: a handler that only does that.
    public static func connect(
        host: String,
        port: Int,
        sslContext: NIOSSLContext?,
        serverHostname: String?,
        eventLoop: any EventLoop,
        connectTimeout: TimeAmount,
        rootHandler: (@Sendable (EventLoopPromise<Void>) -> any ChannelHandler)? = nil
    ) async throws -> HTTP2ClientConnection {
        let ready = eventLoop.makePromise(of: Void.self)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: eventLoop)
                .connectTimeout(connectTimeout)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let sslContext {
                            try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname))
                        }
                        var connection = NIOHTTP2Handler.ConnectionConfiguration()
                        connection.initialSettings = [
                            HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
                            HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
                        ]
                        connection.targetWindowSize = 1 << 24
                        // The caller builds every request's headers itself: checking each
                        // block against RFC 9113's field rules was several percent of the cost.
                        connection.headerBlockValidation = .disabled
                        connection.contentLengthValidation = .disabled
                        let http2 = NIOHTTP2Handler(mode: .client, connectionConfiguration: connection)
                        let root = rootHandler?(ready) ?? HTTP2ReadyHandler(ready: ready)
                        try channel.pipeline.syncOperations.addHandlers([http2, HTTP2StreamsHandler(), root])
                    }
                }
                .connect(host: host, port: port)
                .get()
        } catch {
            ready.fail(error)
            throw error
        }
        let timeout = eventLoop.scheduleTask(in: connectTimeout) { ready.fail(HTTP2RequestError.connectionClosed) }
        do {
            try await ready.futureResult.get()
            timeout.cancel()
            let streams = try await channel.pipeline.handler(type: HTTP2StreamsHandler.self).map {
                NIOLoopBound($0, eventLoop: channel.eventLoop)
            }.get()
            return HTTP2ClientConnection(channel: channel, streams: streams)
        } catch {
            timeout.cancel()
            channel.close(promise: nil)
            throw error
        }
    }

    /// Sends one request on a new stream and waits for the answer or the deadline.
    /// Throws ``HTTP2RequestError``.
    public func execute(headers: HPACKHeaders, body: [UInt8], deadline: NIODeadline) async throws -> HTTP2Response {
        let promise = channel.eventLoop.makePromise(of: HTTP2Response.self)
        let request = HTTP2Request(headers: headers, body: channel.allocator.buffer(bytes: body), deadline: deadline, promise: promise)
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

    public var isActive: Bool { channel.isActive }

    public func close() {
        channel.close(promise: nil)
    }
}

/// The root stream of a connection that needs nothing but to know it is ready: the first
/// SETTINGS succeeds `ready`; an error closes the connection.
final class HTTP2ReadyHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame

    private let ready: EventLoopPromise<Void>

    init(ready: EventLoopPromise<Void>) {
        self.ready = ready
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .settings(.settings) = unwrapInboundIn(data).payload { ready.succeed() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        ready.fail(HTTP2RequestError.connectionClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        ready.fail(error)
        context.close(promise: nil)
    }
}
