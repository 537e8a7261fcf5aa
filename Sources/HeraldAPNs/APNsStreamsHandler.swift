import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2

/// Every request stream of one connection, handled at the frame level: a request is a
/// HEADERS and a DATA frame on the next client stream id, its answer the frames that come
/// back on that id. No channel per stream, and writes made in one event-loop turn share a
/// flush: at APNs rates, the per-stream channel and flush were most of the client's cost.
///
/// Each request has a deadline; a request past it gets RST_STREAM (CANCEL) and fails with
/// ``APNsError/deadlineExceeded``. A stream the peer resets, or closes unanswered (GOAWAY
/// above its last stream id, a lost connection), fails with ``APNsError/connectionClosed``
/// so the client retries it elsewhere. Root-stream frames go on to the connection handler.
final class APNsStreamsHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private struct Pending {
        var promise: EventLoopPromise<APNsResponse>
        var timeout: Scheduled<Void>?
        var status: Int?
        var apnsID: UUID?
        var body: ByteBuffer?
    }

    private var streams: [HTTP2StreamID: Pending] = [:]
    private var nextStreamID: Int32 = 1
    private var context: ChannelHandlerContext?
    private var flushScheduled = false

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        failAll(.connectionClosed)
        self.context = nil
    }

    /// Sends a request on a new stream. Must be called on the channel's event loop.
    func start(headers: HPACKHeaders, body: ByteBuffer, deadline: NIODeadline, promise: EventLoopPromise<APNsResponse>) {
        guard let context, context.channel.isActive, nextStreamID < Int32.max - 2 else {
            promise.fail(APNsError.connectionClosed)
            return
        }
        let streamID = HTTP2StreamID(nextStreamID)
        nextStreamID += 2
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let timeout = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            loopBound.value.timedOut(streamID)
        }
        streams[streamID] = Pending(promise: promise, timeout: timeout)
        // A write the HTTP/2 handler refuses (after GOAWAY, on a closing connection) fails
        // the stream, so the client retries it elsewhere.
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenFailure { error in
            loopBound.value.fail(streamID, APNsError.connectionClosed)
        }
        context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers)))), promise: nil)
        context.write(
            wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(body), endStream: true)))),
            promise: written
        )
        scheduleFlush(context: context)
    }

    /// Requests started in this event-loop turn are flushed together.
    private func scheduleFlush(context: ChannelHandlerContext) {
        guard !flushScheduled else { return }
        flushScheduled = true
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.assumeIsolated().execute {
            let handler = loopBound.value
            handler.flushScheduled = false
            handler.context?.flush()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard frame.streamID != .rootStream, streams[frame.streamID] != nil else {
            context.fireChannelRead(data)
            return
        }
        switch frame.payload {
        case .headers(let headers):
            if let value = headers.headers.first(name: ":status"), let code = Int(value) { streams[frame.streamID]?.status = code }
            if let value = headers.headers.first(name: "apns-id") { streams[frame.streamID]?.apnsID = UUID(uuidString: value) }
            if headers.endStream { finish(frame.streamID) }
        case .data(let data):
            if case .byteBuffer(var buffer) = data.data {
                if streams[frame.streamID]?.body == nil {
                    streams[frame.streamID]?.body = buffer
                } else {
                    streams[frame.streamID]?.body?.writeBuffer(&buffer)
                }
            }
            if data.endStream { finish(frame.streamID) }
        case .rstStream(let code):
            fail(frame.streamID, APNsError.connectionClosed)
        default:
            break
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent, streams[closed.streamID] != nil {
            fail(closed.streamID, APNsError.connectionClosed)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(.connectionClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let streamError = error as? NIOHTTP2Errors.StreamError, streams[streamError.streamID] != nil {
            fail(streamError.streamID, APNsError.connectionClosed)
            return
        }
        context.fireErrorCaught(error)
    }

    private func timedOut(_ streamID: HTTP2StreamID) {
        guard let pending = streams.removeValue(forKey: streamID) else { return }
        pending.promise.fail(APNsError.deadlineExceeded)
        guard let context, context.channel.isActive else { return }
        context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.cancel))), promise: nil)
    }

    private func finish(_ streamID: HTTP2StreamID) {
        guard let pending = streams.removeValue(forKey: streamID) else { return }
        pending.timeout?.cancel()
        guard let status = pending.status else {
            pending.promise.fail(APNsError.connectionClosed)
            return
        }
        var response = APNsResponse(status: status, apnsID: pending.apnsID)
        if let body = pending.body, body.readableBytes > 0,
            let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        {
            response.reason = (object["reason"] as? String).map(APNsReason.init)
            if let milliseconds = object["timestamp"] as? NSNumber {
                response.timestamp = Date(timeIntervalSince1970: milliseconds.doubleValue / 1000)
            }
        }
        pending.promise.succeed(response)
    }

    private func fail(_ streamID: HTTP2StreamID, _ error: APNsError) {
        guard let pending = streams.removeValue(forKey: streamID) else { return }
        pending.timeout?.cancel()
        pending.promise.fail(error)
    }

    private func failAll(_ error: APNsError) {
        let pending = streams
        streams.removeAll()
        for entry in pending.values {
            entry.timeout?.cancel()
            entry.promise.fail(error)
        }
    }
}
