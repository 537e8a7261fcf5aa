import NIOCore
import NIOHPACK
import NIOHTTP2

/// Every request stream of one client connection, at the frame level: a request is a
/// HEADERS and a DATA frame on the next client stream id, its answer the frames that come
/// back on that id. No channel per stream, and the requests handed over together are
/// written with one flush: at push-service rates the per-stream channel and flush were
/// most of a client's cost.
///
/// Each request has a deadline; a request past it gets RST_STREAM (CANCEL) and fails with
/// ``HTTP2RequestError/deadlineExceeded``. One timer per connection, set for the earliest
/// pending deadline, finds them (a timer per request was a twentieth of the cost). A stream
/// the peer resets, or closes unanswered (GOAWAY above its last stream id, a lost
/// connection), fails with ``HTTP2RequestError/connectionClosed``, so the caller can retry
/// it elsewhere. Root-stream frames go on to the next handler.
///
/// Without a stream multiplexer nobody else gives the peer back its connection window, so
/// this handler does (answers' DATA frames would otherwise exhaust the 64 KiB initial
/// window and stall the connection).
public final class HTTP2StreamsHandler: ChannelInboundHandler {
    public typealias InboundIn = HTTP2Frame
    public typealias InboundOut = HTTP2Frame
    public typealias OutboundOut = HTTP2Frame

    private struct Pending {
        var promise: EventLoopPromise<HTTP2Response>
        var deadline: NIODeadline
        var status: Int?
        var headers = HPACKHeaders()
        var body: ByteBuffer?
    }

    /// Window given back in steps of this many bytes.
    static let windowUpdateThreshold = 1 << 15

    private var streams: [HTTP2StreamID: Pending] = [:]
    private var nextStreamID: Int32 = 1
    private var context: ChannelHandlerContext?
    private var unacknowledgedBytes = 0
    /// The deadline timer and when it fires.
    private var sweep: (at: NIODeadline, task: Scheduled<Void>)?

    public init() {}

    public func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        failAll(.connectionClosed)
        self.context = nil
    }

    /// Writes the requests on new streams, in order, and flushes once. Must be called on
    /// the channel's event loop.
    public func start(_ requests: [HTTP2Request]) {
        guard let context, context.channel.isActive else {
            for request in requests { request.promise.fail(HTTP2RequestError.connectionClosed) }
            return
        }
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        for request in requests {
            guard nextStreamID < Int32.max - 2 else {
                request.promise.fail(HTTP2RequestError.connectionClosed)
                continue
            }
            let streamID = HTTP2StreamID(nextStreamID)
            nextStreamID += 2
            streams[streamID] = Pending(promise: request.promise, deadline: request.deadline)
            armSweep(at: request.deadline, context: context)
            // A write the HTTP/2 handler refuses (after GOAWAY, on a closing connection)
            // fails the stream, so the caller can retry it elsewhere.
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.assumeIsolated().whenFailure { _ in
                loopBound.value.fail(streamID, .connectionClosed)
            }
            context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: request.headers)))), promise: nil)
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(request.body), endStream: true)))),
                promise: written
            )
        }
        context.flush()
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard frame.streamID != .rootStream else {
            context.fireChannelRead(data)
            return
        }
        switch frame.payload {
        case .headers(let headers):
            guard streams[frame.streamID] != nil else { return }
            // The answer's header block as it came (trailers, if any, are not kept).
            if streams[frame.streamID]?.status == nil, let value = headers.headers.first(name: ":status") {
                streams[frame.streamID]?.status = Int(value)
                streams[frame.streamID]?.headers = headers.headers
            }
            if headers.endStream { finish(frame.streamID) }
        case .data(let data):
            unacknowledgedBytes += data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0)
            guard streams[frame.streamID] != nil else { return }
            if case .byteBuffer(var buffer) = data.data {
                if streams[frame.streamID]?.body == nil {
                    streams[frame.streamID]?.body = buffer
                } else {
                    streams[frame.streamID]?.body?.writeBuffer(&buffer)
                }
            }
            if data.endStream { finish(frame.streamID) }
        case .rstStream:
            fail(frame.streamID, .connectionClosed)
        default:
            break
        }
    }

    /// Gives the connection window back in steps, once the read is over: a write while the
    /// HTTP/2 handler is still delivering a frame would hand us that frame's stream-closed
    /// event before the frame's own processing finished.
    public func channelReadComplete(context: ChannelHandlerContext) {
        if unacknowledgedBytes >= Self.windowUpdateThreshold {
            let increment = unacknowledgedBytes
            unacknowledgedBytes = 0
            let update = HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment))
            context.writeAndFlush(wrapOutboundOut(update), promise: nil)
        }
        context.fireChannelReadComplete()
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent {
            fail(closed.streamID, .connectionClosed)
        }
        context.fireUserInboundEventTriggered(event)
    }

    public func channelInactive(context: ChannelHandlerContext) {
        failAll(.connectionClosed)
        context.fireChannelInactive()
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let streamError = error as? NIOHTTP2Errors.StreamError {
            fail(streamError.streamID, .connectionClosed)
            return
        }
        context.fireErrorCaught(error)
    }

    /// Makes sure the deadline timer fires by `deadline`.
    private func armSweep(at deadline: NIODeadline, context: ChannelHandlerContext) {
        if let sweep {
            guard deadline < sweep.at else { return }
            sweep.task.cancel()
        }
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let task = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            loopBound.value.sweepExpired()
        }
        sweep = (deadline, task)
    }

    /// Fails the requests past their deadline and sets the timer for the next one.
    private func sweepExpired() {
        sweep = nil
        let now = NIODeadline.now()
        var expired: [HTTP2StreamID] = []
        var next: NIODeadline?
        for (streamID, pending) in streams {
            if pending.deadline <= now {
                expired.append(streamID)
            } else if next == nil || pending.deadline < next! {
                next = pending.deadline
            }
        }
        for streamID in expired { timedOut(streamID) }
        if let next, let context { armSweep(at: next, context: context) }
    }

    private func timedOut(_ streamID: HTTP2StreamID) {
        guard let pending = streams.removeValue(forKey: streamID) else { return }
        pending.promise.fail(HTTP2RequestError.deadlineExceeded)
        guard let context, context.channel.isActive else { return }
        context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.cancel))), promise: nil)
    }

    private func finish(_ streamID: HTTP2StreamID) {
        guard let pending = streams.removeValue(forKey: streamID) else { return }
        guard let status = pending.status else {
            pending.promise.fail(HTTP2RequestError.connectionClosed)
            return
        }
        pending.promise.succeed(HTTP2Response(status: status, headers: pending.headers, body: pending.body))
    }

    private func fail(_ streamID: HTTP2StreamID, _ error: HTTP2RequestError) {
        guard let pending = streams.removeValue(forKey: streamID) else { return }
        pending.promise.fail(error)
    }

    private func failAll(_ error: HTTP2RequestError) {
        let pending = streams
        streams.removeAll()
        sweep?.task.cancel()
        sweep = nil
        for entry in pending.values { entry.promise.fail(error) }
    }
}
