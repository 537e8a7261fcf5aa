import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2

/// APNs' answer to one request.
struct APNsResponse: Sendable {
    var status: Int
    var apnsID: UUID?
    var reason: APNsReason?
    /// Unregistered's timestamp.
    var timestamp: Date?
}

/// One request stream: writes the request, gathers the answer, and gives up at the deadline.
final class APNsStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let headers: HPACKHeaders
    private let body: ByteBuffer
    private let deadline: NIODeadline
    private let promise: EventLoopPromise<APNsResponse>
    private var started = false
    private var finished = false
    private var timeout: Scheduled<Void>?
    private var status: Int?
    private var apnsID: UUID?
    private var responseBody: ByteBuffer?

    init(headers: HPACKHeaders, body: ByteBuffer, deadline: NIODeadline, promise: EventLoopPromise<APNsResponse>) {
        self.headers = headers
        self.body = body
        self.deadline = deadline
        self.promise = promise
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    private func start(context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timeout = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            let (handler, context) = loopBound.value
            handler.fail(.deadlineExceeded)
            context.close(promise: nil)
        }
        context.write(wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: true))), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            if let value = frame.headers.first(name: ":status"), let code = Int(value) { status = code }
            if let value = frame.headers.first(name: "apns-id") { apnsID = UUID(uuidString: value) }
            if frame.endStream { finish(context: context) }
        case .data(let frame):
            if case .byteBuffer(var buffer) = frame.data {
                if responseBody == nil {
                    responseBody = buffer
                } else {
                    responseBody!.writeBuffer(&buffer)
                }
            }
            if frame.endStream { finish(context: context) }
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(.connectionClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(APNsError(.connectionClosed, detail: "\(error)"))
        context.close(promise: nil)
    }

    private func finish(context: ChannelHandlerContext) {
        guard !finished, let status else { return fail(.connectionClosed) }
        finished = true
        timeout?.cancel()
        var response = APNsResponse(status: status, apnsID: apnsID)
        if let responseBody, responseBody.readableBytes > 0,
            let object = try? JSONSerialization.jsonObject(with: Data(responseBody.readableBytesView)) as? [String: Any]
        {
            response.reason = (object["reason"] as? String).map(APNsReason.init)
            if let milliseconds = object["timestamp"] as? NSNumber {
                response.timestamp = Date(timeIntervalSince1970: milliseconds.doubleValue / 1000)
            }
        }
        promise.succeed(response)
    }

    private func fail(_ error: APNsError) {
        guard !finished else { return }
        finished = true
        timeout?.cancel()
        promise.fail(error)
    }
}
