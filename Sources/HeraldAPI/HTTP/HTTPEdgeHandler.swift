import Foundation
import HTTPTypes
import HeraldCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Each API connection's deadlines (``HTTPDeadlines``), and its answer to a request that
/// is not valid HTTP/1.1.
///
/// Hummingbird answers a decoder error with an empty 400 and closes; this handler, behind
/// the codec, saw the error go by and makes that answer Herald's JSON error
/// (`malformed_request`). After any answer that says `Connection: close` (that one, or a
/// 413 whose body is left unread), it half-closes and gives the client
/// ``HTTPDeadlines/Configuration/lingerTimeout`` to read the answer before closing.
final class HTTPEdgeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var deadlines: HTTPDeadlines<ContinuousClock.Instant>
    private var timer: Scheduled<Void>?
    private var timerAt: ContinuousClock.Instant?
    private var responseCloses = false
    private var decoderError: (any Error)?
    private var rewrittenBody: ByteBuffer?
    private let logger: Logger

    init(configuration: HTTPDeadlines<ContinuousClock.Instant>.Configuration, logger: Logger) {
        self.deadlines = HTTPDeadlines(configuration: configuration, now: .now)
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        arm(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            deadlines.headReceived(now: .now, streamedUpload: DeviceImportRoutes.isStreamedUpload(head))
            arm(context)
        case .body:
            break
        case .end:
            deadlines.endReceived()
        }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is RequestBytesHandler.BytesArrived {
            deadlines.bytesReceived(now: .now)
            arm(context)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is HTTPParserError { decoderError = error }
        context.fireErrorCaught(error)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            guard head.status.code >= 200 else { break }
            responseCloses = head.headerFields[.connection]?.lowercased() == "close"
            if let error = decoderError, head.status == .badRequest, head.headerFields[.contentLength] == "0" {
                // Hummingbird's answer to a decoder error: give it Herald's JSON body.
                let body = Self.malformedRequestBody(error)
                head.headerFields[.contentType] = "application/json; charset=utf-8"
                head.headerFields[.contentLength] = String(body.readableBytes)
                rewrittenBody = body
                context.write(wrapOutboundOut(.head(head)), promise: promise)
                return
            }
        case .body:
            break
        case .end:
            if let body = rewrittenBody {
                rewrittenBody = nil
                context.write(wrapOutboundOut(.body(body)), promise: nil)
            }
            deadlines.responseEnded(now: .now, closing: responseCloses)
            if responseCloses {
                context.writeAndFlush(data, promise: promise)
                context.close(mode: .output, promise: nil)
                arm(context)
                return
            }
            arm(context)
        }
        context.write(data, promise: promise)
    }

    /// Keeps one timer, at or before the deadline; when it fires, the deadline decides.
    private func arm(_ context: ChannelHandlerContext) {
        guard let deadline = deadlines.deadline else { return }
        if let timerAt, timerAt <= deadline { return }
        timer?.cancel()
        timerAt = deadline
        let nanoseconds = ContinuousClock.now.duration(to: deadline).components
        let delay = TimeAmount.nanoseconds(max(0, nanoseconds.seconds * 1_000_000_000 + nanoseconds.attoseconds / 1_000_000_000))
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: delay) { [self] in
            timer = nil
            timerAt = nil
            switch deadlines.timerFired(now: .now) {
            case .close:
                logger.debug("closing an HTTP connection that took too long")
                context.close(promise: nil)
            case .wait:
                arm(context)
            case .none:
                break
            }
        }
    }

    static func malformedRequestBody(_ error: any Error) -> ByteBuffer {
        let error = HeraldError(.malformedRequest, "the request is not valid HTTP/1.1 (\(error))")
        let data = (try? HeraldRequestContext.encoder.encode(ErrorBody(error: .init(code: error.code.rawValue, message: error.message)))) ?? Data()
        return ByteBuffer(bytes: data)
    }
}
