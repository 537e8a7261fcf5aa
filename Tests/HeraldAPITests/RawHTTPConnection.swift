import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A TCP connection to the API that sends exactly the bytes a test gives it (malformed
/// requests included) and collects what comes back, for tests of the HTTP edge.
final class RawHTTPConnection: Sendable {
    private let channel: any Channel
    private let received: Received

    private final class Received: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        struct State {
            var bytes: [UInt8] = []
            var closed = false
        }
        let state = NIOLockedValueBox(State())

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            state.withLockedValue { $0.bytes += buffer.readableBytesView }
        }

        func channelInactive(context: ChannelHandlerContext) {
            state.withLockedValue { $0.closed = true }
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case ChannelEvent.inputClosed = event as? ChannelEvent ?? .outputClosed {
                state.withLockedValue { $0.closed = true }
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }

    private init(channel: any Channel, received: Received) {
        self.channel = channel
        self.received = received
    }

    /// Connects to `host:port`, from the local address `source` when given (any
    /// 127.x.y.z works on Linux loopback: a second client address).
    static func connect(host: String = "127.0.0.1", port: Int, from source: String? = nil) async throws -> RawHTTPConnection {
        let received = Received()
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(received) }
            }
        if let source { bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0)) }
        let channel = try await bootstrap.connect(host: host, port: port).get()
        return RawHTTPConnection(channel: channel, received: received)
    }

    func send(_ text: String) async throws {
        try await send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes))
    }

    /// Half-closes: the server sees the end of the request stream.
    func finishSending() async throws {
        try await channel.close(mode: .output)
    }

    func close() async {
        try? await channel.close()
    }

    /// Whether the server has closed the connection.
    var isClosed: Bool { received.state.withLockedValue { $0.closed } }

    /// The next response, once complete; nil if the connection closed first or none came
    /// within `timeout`.
    func response(timeout: Duration = .seconds(10)) async throws -> RawHTTPResponse? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let (bytes, closed) = received.state.withLockedValue { ($0.bytes, $0.closed) }
            if let (response, used) = RawHTTPResponse.parse(bytes) {
                received.state.withLockedValue { $0.bytes.removeFirst(used) }
                return response
            }
            if closed { return nil }
            try await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// Waits until the server closes the connection; false if it hasn't within `timeout`.
    func closedByServer(within timeout: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if isClosed { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return isClosed
    }
}

/// A response read off the wire.
struct RawHTTPResponse: Sendable, CustomStringConvertible {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: String

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The stable code of a JSON error body.
    var errorCode: Int? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] else { return nil }
        return (object["error"] as? [String: Any])?["code"] as? Int
    }

    var description: String { "\(status) \(headers.map { "\($0.name): \($0.value)" }.joined(separator: ", ")) \(body)" }

    /// A response at the start of `bytes` (with a Content-Length body), and the bytes it took.
    static func parse(_ bytes: [UInt8]) -> (RawHTTPResponse, Int)? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard bytes.count >= separator.count,
            let end = (0...(bytes.count - separator.count)).first(where: { bytes[$0..<$0 + separator.count].elementsEqual(separator) })
        else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        guard let statusLine = head.first, statusLine.hasPrefix("HTTP/1."), let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "")
        else {
            return nil
        }
        let headers = head.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let length = headers.first { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) } ?? 0
        let bodyStart = end + separator.count
        guard bytes.count >= bodyStart + length else { return nil }
        let body = String(decoding: bytes[bodyStart..<bodyStart + length], as: UTF8.self)
        return (RawHTTPResponse(status: status, headers: headers, body: body), bodyStart + length)
    }
}
