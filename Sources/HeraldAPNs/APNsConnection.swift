import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// One HTTP/2 connection to APNs.
final class APNsConnection: Sendable {
    let id: Int
    let channel: any Channel
    private let multiplexer: NIOHTTP2Handler.StreamMultiplexer

    private init(id: Int, channel: any Channel, multiplexer: NIOHTTP2Handler.StreamMultiplexer) {
        self.id = id
        self.channel = channel
        self.multiplexer = multiplexer
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
                        let http2 = NIOHTTP2Handler(mode: .client, eventLoop: channel.eventLoop, connectionConfiguration: connection) {
                            $0.close()
                        }
                        let handler = APNsConnectionHandler(events: events, ready: ready, pingInterval: pingInterval, pingTimeout: pingTimeout)
                        try channel.pipeline.syncOperations.addHandlers([http2, handler])
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
            let multiplexer = try await channel.pipeline.handler(type: NIOHTTP2Handler.self).flatMapThrowing {
                try $0.syncMultiplexer()
            }.get()
            return APNsConnection(id: id, channel: channel, multiplexer: multiplexer)
        } catch {
            timeout.cancel()
            channel.close(promise: nil)
            throw error
        }
    }

    /// Sends one request on a new stream and waits for the answer or the deadline.
    func execute(headers: HPACKHeaders, body: [UInt8], deadline: NIODeadline) async throws -> APNsResponse {
        let promise = channel.eventLoop.makePromise(of: APNsResponse.self)
        let created = channel.eventLoop.makePromise(of: (any Channel).self)
        created.futureResult.whenFailure { promise.fail(APNsError(.connectionClosed, detail: "\($0)")) }
        let buffer = channel.allocator.buffer(bytes: body)
        multiplexer.createStreamChannel(promise: created) { stream in
            stream.eventLoop.makeCompletedFuture {
                let handler = APNsStreamHandler(headers: headers, body: buffer, deadline: deadline, promise: promise)
                try stream.pipeline.syncOperations.addHandler(handler)
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
