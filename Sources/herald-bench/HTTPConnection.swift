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
        try await request("POST", path, body: body, authorization: authorization, timeout: timeout)
    }

    /// GETs `path` (a readiness check), with the same time limit.
    func get(_ path: String, authorization: String = "", timeout: Duration = .seconds(10)) async throws -> Response {
        try await request("GET", path, body: ByteBuffer(), authorization: authorization, timeout: timeout)
    }

    private func request(_ method: String, _ path: String, body: ByteBuffer, authorization: String, timeout: Duration) async throws -> Response {
        let promise = channel.eventLoop.makePromise(of: Response.self)
        channel.writeAndFlush(Exchange(method: method, path: path, authorization: authorization, body: body, response: promise), promise: nil)
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
                channel.writeAndFlush(
                    Exchange(method: "POST", path: path, authorization: authorization, body: body, response: response),
                    promise: nil
                )
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
        var method: String
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
        /// The request head up to the Content-Length value, for the last method, path and credentials.
        private var head: (method: String, path: String, authorization: String, bytes: [UInt8])?

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
            let head: [UInt8]
            if let kept = self.head, kept.method == exchange.method, kept.path == exchange.path, kept.authorization == exchange.authorization {
                head = kept.bytes
            } else {
                let text =
                    "\(exchange.method) \(exchange.path) HTTP/1.1\r\nHost: \(host)\r\nAuthorization: \(exchange.authorization)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: "
                head = Array(text.utf8)
                self.head = (exchange.method, exchange.path, exchange.authorization, head)
            }
            var request = context.channel.allocator.buffer(capacity: head.count + 24 + exchange.body.readableBytes)
            request.writeBytes(head)
            request.writeString(String(exchange.body.readableBytes))  // a small string: no allocation
            request.writeStaticString("\r\n\r\n")
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

        /// One whole response off the front of `buffer`, or nil until it has arrived. Read
        /// byte by byte: the load generator's CPU is taken from the server it measures.
        private static func nextResponse(from buffer: inout ByteBuffer) throws -> Response? {
            let parsed = try buffer.withUnsafeReadableBytes { bytes -> (status: Int, headLength: Int, length: Int)? in
                guard let headEnd = headEnd(bytes) else { return nil }
                let statusLine = "HTTP/1.1 ".utf8
                guard headEnd >= 12, bytes.starts(with: statusLine) else {
                    throw BenchError("not an HTTP/1.1 response: \(String(decoding: bytes.prefix(100), as: UTF8.self))")
                }
                var status = 0
                for byte in bytes[9..<12] {
                    guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { throw BenchError("bad HTTP status line") }
                    status = status * 10 + Int(byte - UInt8(ascii: "0"))
                }
                var length: Int?
                var line = lineEnd(bytes, from: 0, to: headEnd) + 2
                while line < headEnd {
                    let end = lineEnd(bytes, from: line, to: headEnd)
                    let field = bytes[line..<end]
                    if hasName(field, "transfer-encoding") { throw BenchError("response not framed by Content-Length") }
                    if hasName(field, "content-length") {
                        var value = 0
                        for byte in field.dropFirst("content-length:".utf8.count) where byte != UInt8(ascii: " ") {
                            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { throw BenchError("bad Content-Length") }
                            value = value * 10 + Int(byte - UInt8(ascii: "0"))
                        }
                        length = value
                    }
                    line = end + 2
                }
                guard let length else { throw BenchError("response without Content-Length") }
                return (status, headEnd + 4, length)
            }
            guard let parsed, buffer.readableBytes >= parsed.headLength + parsed.length else { return nil }
            buffer.moveReaderIndex(forwardBy: parsed.headLength)
            let body = buffer.readSlice(length: parsed.length)!
            return Response(status: parsed.status, body: body)
        }

        /// Where the blank line ending the head starts (its CR LF CR LF), if it has arrived.
        private static func headEnd(_ bytes: UnsafeRawBufferPointer) -> Int? {
            guard bytes.count >= 4 else { return nil }
            for index in 0...(bytes.count - 4)
            where bytes[index] == 0x0D && bytes[index + 1] == 0x0A && bytes[index + 2] == 0x0D && bytes[index + 3] == 0x0A {
                return index
            }
            return nil
        }

        /// Where the line starting at `start` ends (its CR), or `limit`.
        private static func lineEnd(_ bytes: UnsafeRawBufferPointer, from start: Int, to limit: Int) -> Int {
            var index = start
            while index < limit, !(bytes[index] == 0x0D && bytes[index + 1] == 0x0A) { index += 1 }
            return index
        }

        /// Whether a header line has this (lowercase) field name, in any case.
        private static func hasName(_ field: Slice<UnsafeRawBufferPointer>, _ name: StaticString) -> Bool {
            guard field.count > name.utf8CodeUnitCount, field[field.startIndex + name.utf8CodeUnitCount] == UInt8(ascii: ":") else { return false }
            var index = field.startIndex
            for byte in UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount) {
                var lowered = field[index]
                if (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(lowered) { lowered += 32 }
                guard lowered == byte else { return false }
                index += 1
            }
            return true
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
