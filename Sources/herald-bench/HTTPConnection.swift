import NIOCore
import NIOHTTP1
import NIOPosix

/// One HTTP/1.1 keep-alive connection to Herald's API. Requests are answered in order;
/// the benchmark sends one at a time on each connection.
final class HTTPConnection: Sendable {
    struct Response: Sendable {
        var status: Int
        var body: ByteBuffer
    }

    private let channel: any Channel
    private let authority: String

    private init(channel: any Channel, authority: String) {
        self.channel = channel
        self.authority = authority
    }

    static func connect(host: String, port: Int, group: any EventLoopGroup) async throws -> HTTPConnection {
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(.seconds(5))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ExchangeHandler())
                }
            }
            .connect(host: host, port: port).get()
        return HTTPConnection(channel: channel, authority: "\(host):\(port)")
    }

    var isActive: Bool { channel.isActive }

    /// POSTs `body`; a request not answered within `timeout` closes the connection and fails.
    func post(_ path: String, body: ByteBuffer, authorization: String, timeout: Duration = .seconds(10)) async throws -> Response {
        var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: path)
        head.headers.add(name: "Host", value: authority)
        head.headers.add(name: "Authorization", value: authorization)
        head.headers.add(name: "Content-Type", value: "application/json")
        head.headers.add(name: "Content-Length", value: "\(body.readableBytes)")
        let promise = channel.eventLoop.makePromise(of: Response.self)
        channel.writeAndFlush(Exchange(head: head, body: body, response: promise), promise: nil)
        let channel = self.channel
        let deadline = channel.eventLoop.scheduleTask(in: TimeAmount(timeout)) { channel.close(promise: nil) }
        defer { deadline.cancel() }
        return try await promise.futureResult.get()
    }

    /// Sends requests one after the other until `next` returns nil, each as soon as the
    /// previous one is answered, entirely on the connection's event loop: the flat-out load
    /// costs the machine no hop to a task and back per request. `answered` gets each
    /// answer (or the error) with the send time `next` gave. A request not answered by
    /// `deadline` closes the connection.
    func postBackToBack(
        _ path: String,
        authorization: String,
        deadline: NIODeadline,
        next: @escaping @Sendable () -> (body: ByteBuffer, sentAt: Int64)?,
        answered: @escaping @Sendable (Result<Response, any Error>, Int64) -> Void
    ) async {
        let channel = self.channel
        let authority = self.authority
        let loop = channel.eventLoop
        let done = loop.makePromise(of: Void.self)
        let watchdog = loop.scheduleTask(deadline: deadline) { channel.close(promise: nil) }
        loop.execute {
            @Sendable func send() {
                guard let (body, sentAt) = next() else {
                    done.succeed()
                    return
                }
                var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: path)
                head.headers.add(name: "Host", value: authority)
                head.headers.add(name: "Authorization", value: authorization)
                head.headers.add(name: "Content-Type", value: "application/json")
                head.headers.add(name: "Content-Length", value: "\(body.readableBytes)")
                let response = loop.makePromise(of: Response.self)
                channel.writeAndFlush(Exchange(head: head, body: body, response: response), promise: nil)
                response.futureResult.whenComplete { result in
                    answered(result, sentAt)
                    if case .failure = result {
                        done.succeed()
                    } else {
                        send()
                    }
                }
            }
            send()
        }
        try? await done.futureResult.get()
        watchdog.cancel()
    }

    func close() async {
        try? await channel.close()
    }

    fileprivate struct Exchange: Sendable {
        var head: HTTPRequestHead
        var body: ByteBuffer
        var response: EventLoopPromise<Response>
    }

    /// Writes each request and completes its promise with the matching response; a closed
    /// connection fails whatever is still waiting.
    private final class ExchangeHandler: ChannelDuplexHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundIn = Exchange
        typealias OutboundOut = HTTPClientRequestPart

        private var waiting = CircularBuffer<EventLoopPromise<Response>>()
        private var status = 0
        private var body = ByteBuffer()

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let exchange = unwrapOutboundIn(data)
            guard context.channel.isActive else {
                exchange.response.fail(BenchError("HTTP connection closed"))
                promise?.fail(ChannelError.ioOnClosedChannel)
                return
            }
            waiting.append(exchange.response)
            context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(exchange.body))), promise: nil)
            context.write(wrapOutboundOut(.end(nil)), promise: promise)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                status = Int(head.status.code)
                body.clear()
            case .body(var part):
                body.writeBuffer(&part)
            case .end:
                waiting.popFirst()?.succeed(Response(status: status, body: body))
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            failAll(BenchError("HTTP connection closed (or the request timed out)"))
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            failAll(error)
            context.close(promise: nil)
        }

        private func failAll(_ error: any Error) {
            while let promise = waiting.popFirst() { promise.fail(error) }
        }
    }
}
