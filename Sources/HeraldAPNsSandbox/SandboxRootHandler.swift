import Foundation
import HeraldCore
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOSSL

/// Sits on a sandbox connection after the HTTP/2 handler and sees every frame: gathers
/// each stream's request, answers it, holds the connection's authentication state,
/// raises the stream limit, and sends GOAWAY. Answers written while reading go out with
/// one flush when the read ends.
final class SandboxRootHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private let sandbox: APNsSandbox
    private var auth: SandboxConnectionAuth
    private var context: ChannelHandlerContext?
    private var certificateChecked = false
    private var lastProcessedStreamID = HTTP2StreamID.rootStream
    private var goingAway = false
    private var streams: [HTTP2StreamID: SandboxStreamState] = [:]
    private var needsFlush = false
    /// DATA bytes received and not yet given back to the peer's connection window.
    private var unacknowledgedBytes = 0

    init(sandbox: APNsSandbox, connectionID: Int) {
        self.sandbox = sandbox
        self.auth = SandboxConnectionAuth(connectionID: connectionID)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let streamID = frame.streamID
        guard streamID != .rootStream else { return }
        switch frame.payload {
        case .headers(let headers):
            streams[streamID, default: SandboxStreamState()].receive(headers.headers)
            if headers.endStream { complete(streamID, context: context) }
        case .data(let data):
            streams[streamID, default: SandboxStreamState()].receive(data.data)
            replenishWindows(streamID: streamID, data: data, context: context)
            if data.endStream { complete(streamID, context: context) }
        case .rstStream:
            streams[streamID] = nil
        default:
            break
        }
    }

    /// Without a stream multiplexer nobody else returns flow-control credit: give back
    /// the connection window in 32 KiB steps, and a stream's window while it is open.
    private func replenishWindows(streamID: HTTP2StreamID, data: HTTP2Frame.FramePayload.Data, context: ChannelHandlerContext) {
        let length = data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0)
        guard length > 0 else { return }
        if !data.endStream {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .windowUpdate(windowSizeIncrement: length))), promise: nil)
            needsFlush = true
        }
        unacknowledgedBytes += length
        if unacknowledgedBytes >= 1 << 15 {
            let increment = unacknowledgedBytes
            unacknowledgedBytes = 0
            context.write(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment))), promise: nil)
            needsFlush = true
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    private func complete(_ streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let stream = streams.removeValue(forKey: streamID) else { return }
        switch handle(stream.request, streamID: streamID) {
        case .respond(let response):
            respond(response, streamID: streamID, context: context)
            needsFlush = true
        case .respondAfter(let delay, let response):
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(
                in: TimeAmount.nanoseconds(Int64(delay.components.seconds) * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000)
            ) {
                let (handler, context) = loopBound.value
                guard !handler.goingAway else { return }
                handler.respond(response, streamID: streamID, context: context)
                context.flush()
            }
        case .neverAnswer, .goAway, nil:
            break
        }
    }

    private func respond(_ response: SandboxResponse, streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        var headers = HPACKHeaders()
        headers.add(name: ":status", value: response.status == 200 ? "200" : String(response.status))
        // Every apns-id is new: indexing it would only churn the peer's HPACK table.
        headers.add(name: "apns-id", value: response.apnsID.lowercasedString, indexing: .nonIndexable)
        guard let body = response.body else {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: true)))), promise: nil)
            return
        }
        headers.add(name: "content-type", value: "application/json")
        context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers)))), promise: nil)
        let buffer = context.channel.allocator.buffer(bytes: body)
        context.write(
            wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(buffer), endStream: true)))),
            promise: nil
        )
    }

    func channelInactive(context: ChannelHandlerContext) {
        sandbox.connectionClosed(auth.connectionID)
        context.fireChannelInactive()
    }

    /// Decides what to do with a complete request on `streamID`, applying the
    /// connection-level effects (stream limit, GOAWAY) itself.
    func handle(_ request: SandboxRequest, streamID: HTTP2StreamID) -> SandboxDecision.Action? {
        guard !goingAway, let context else { return nil }
        if !certificateChecked {
            certificateChecked = true
            let tls = try? context.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self)
            auth.clientCertificateDER = try? tls?.peerCertificate?.toDERBytes()
        }
        let decision = sandbox.decide(request, connection: &auth)
        if decision.raiseStreamLimit {
            let settings = HTTP2Settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: sandbox.configuration.maxConcurrentStreams)])
            context.write(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings(settings)))), promise: nil)
            needsFlush = true
        }
        switch decision.action {
        case .goAway(let reason):
            sendGoAway(reason: reason)
        case .respond, .respondAfter:
            lastProcessedStreamID = max(lastProcessedStreamID, streamID)
        case .neverAnswer:
            break
        }
        return decision.action
    }

    /// Stops answering and closes, as a lost network would: requests still in the TLS
    /// pipe are not processed.
    func drop() {
        goingAway = true
        context?.close(promise: nil)
    }

    /// Sends GOAWAY with the last processed stream and `{"reason": ...}`, then closes.
    func sendGoAway(reason: String) {
        guard !goingAway, let context else { return }
        goingAway = true
        let body = (try? JSONSerialization.data(withJSONObject: ["reason": reason])) ?? Data()
        let frame = HTTP2Frame(
            streamID: .rootStream,
            payload: .goAway(lastStreamID: lastProcessedStreamID, errorCode: .noError, opaqueData: context.channel.allocator.buffer(bytes: body))
        )
        let loopBoundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(frame)).whenComplete { _ in
            loopBoundContext.value.close(promise: nil)
        }
    }
}
