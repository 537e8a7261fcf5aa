import NIOCore
import NIOPosix

/// One HTTP/1.1 keep-alive connection to Herald's API. Requests are answered in order;
/// the benchmark sends one at a time on each connection.
///
/// The load generator shares the machine with what it measures, so it speaks only the
/// HTTP it needs: a POST written in one piece, and answers framed by Content-Length
/// (Herald's always are; anything else fails the request).
final class HTTPConnection: Sendable {
    struct Response: Sendable {
        var status: Int
        var body: ByteBuffer
    }

    private let channel: any Channel

    private init(channel: any Channel) {
        self.channel = channel
    }

    static func connect(host: String, port: Int, group: any EventLoopGroup) async throws -> HTTPConnection {
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(.seconds(5))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ExchangeHandler(host: "\(host):\(port)"))
                }
            }
            .connect(host: host, port: port).get()
        return HTTPConnection(channel: channel)
    }

    var isActive: Bool { channel.isActive }

    /// POSTs `body`; a request not answered within `timeout` closes the connection and fails.
    func post(_ path: String, body: ByteBuffer, authorization: String, timeout: Duration = .seconds(10)) async throws -> Response {
        let promise = channel.eventLoop.makePromise(of: Response.self)
        channel.writeAndFlush(Exchange(path: path, authorization: authorization, body: body, response: promise), promise: nil)
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
        let loop = channel.eventLoop
        let done = loop.makePromise(of: Void.self)
        let watchdog = loop.scheduleTask(deadline: deadline) { channel.close(promise: nil) }
        loop.execute {
            @Sendable func send() {
                guard let (body, sentAt) = next() else {
                    done.succeed()
                    return
                }
                let response = loop.makePromise(of: Response.self)
                channel.writeAndFlush(Exchange(path: path, authorization: authorization, body: body, response: response), promise: nil)
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
        var path: String
        var authorization: String
        var body: ByteBuffer
        var response: EventLoopPromise<Response>
    }

    /// Writes each request and completes its promise with the matching response; a closed
    /// connection fails whatever is still waiting.
    private final class ExchangeHandler: ChannelDuplexHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundIn = Exchange
        typealias OutboundOut = ByteBuffer

        private let host: String
        private var waiting = CircularBuffer<EventLoopPromise<Response>>()
        private var received = ByteBuffer()

        init(host: String) {
            self.host = host
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let exchange = unwrapOutboundIn(data)
            guard context.channel.isActive else {
                exchange.response.fail(BenchError("HTTP connection closed"))
                promise?.fail(ChannelError.ioOnClosedChannel)
                return
            }
            waiting.append(exchange.response)
            var request = context.channel.allocator.buffer(capacity: 256 + exchange.body.readableBytes)
            request.writeString(
                "POST \(exchange.path) HTTP/1.1\r\nHost: \(host)\r\nAuthorization: \(exchange.authorization)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(exchange.body.readableBytes)\r\n\r\n"
            )
            request.writeImmutableBuffer(exchange.body)
            context.write(wrapOutboundOut(request), promise: promise)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            received.writeBuffer(&bytes)
            do {
                while let response = try Self.nextResponse(from: &received) {
                    waiting.popFirst()?.succeed(response)
                }
            } catch {
                failAll(error)
                context.close(promise: nil)
            }
            received.discardReadBytes()
        }

        /// One whole response off the front of `buffer`, or nil until it has arrived.
        private static func nextResponse(from buffer: inout ByteBuffer) throws -> Response? {
            let view = buffer.readableBytesView
            guard let end = view.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A]) else { return nil }
            let head = String(decoding: view[view.startIndex..<end.lowerBound], as: UTF8.self)
            let lines = head.split(separator: "\r\n")
            guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1.1 "),
                let status = Int(statusLine.dropFirst(9).prefix(3))
            else { throw BenchError("not an HTTP/1.1 response: \(head.prefix(100))") }
            var length: Int?
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[..<colon].lowercased()
                if name == "transfer-encoding" { throw BenchError("response not framed by Content-Length") }
                if name == "content-length" { length = Int(line[line.index(after: colon)...].drop { $0 == " " }) }
            }
            guard let length else { throw BenchError("response without Content-Length") }
            let headLength = end.upperBound - view.startIndex
            guard buffer.readableBytes >= headLength + length else { return nil }
            buffer.moveReaderIndex(forwardBy: headLength)
            let body = buffer.readSlice(length: length)!
            return Response(status: status, body: body)
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
