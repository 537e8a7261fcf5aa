import Foundation
import HeraldCore
import HeraldHTTP2
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOSSL

/// Sits on a sandbox connection after the HTTP/2 handler and sees every frame: gathers
/// each stream's request, answers it, holds the connection's authentication state,
/// raises the stream limit, and sends GOAWAY. The requests completed during one read are
/// decided together when the read ends (one turn of the sandbox's lock, not one per
/// request: the connections' event loops contended for it) and answered with one flush.
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
    /// Requests complete in this read, in arrival order.
    private var completed: [(streamID: HTTP2StreamID, request: SandboxRequest)] = []
    private var needsFlush = false
    private var window = HTTP2ReceiveWindow()

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

    /// Without a stream multiplexer nobody else returns flow-control credit.
    private func replenishWindows(streamID: HTTP2StreamID, data: HTTP2Frame.FramePayload.Data, context: ChannelHandlerContext) {
        for update in window.received(data, on: streamID) {
            context.write(wrapOutboundOut(update), promise: nil)
            needsFlush = true
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if !completed.isEmpty {
            let batch = completed
            completed.removeAll(keepingCapacity: true)
            answer(batch, context: context)
        }
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    private func complete(_ streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let stream = streams.removeValue(forKey: streamID) else { return }
        completed.append((streamID, stream.request))
    }

    /// Decides the requests in order, applying the connection-level effects (stream limit,
    /// GOAWAY) and writing the answers in that order. Requests after a GOAWAY get no
    /// decision: they stay unprocessed, above the GOAWAY's last stream id.
    private func answer(_ batch: [(streamID: HTTP2StreamID, request: SandboxRequest)], context: ChannelHandlerContext) {
        guard !goingAway else { return }
        if !certificateChecked {
            certificateChecked = true
            let tls = try? context.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self)
            auth.clientCertificateDER = try? tls?.peerCertificate?.toDERBytes()
        }
        let decisions = sandbox.decide(batch.map(\.request), connection: &auth)
        for (decision, (streamID, _)) in zip(decisions, batch) {
            if decision.raiseStreamLimit {
                let settings = HTTP2Settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: sandbox.configuration.maxConcurrentStreams)])
                context.write(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings(settings)))), promise: nil)
                needsFlush = true
            }
            switch decision.action {
            case .respond(let response):
                lastProcessedStreamID = max(lastProcessedStreamID, streamID)
                respond(response, streamID: streamID, context: context)
                needsFlush = true
            case .respondAfter(let delay, let response):
                lastProcessedStreamID = max(lastProcessedStreamID, streamID)
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(in: TimeAmount(delay)) {
                    let (handler, context) = loopBound.value
                    guard !handler.goingAway else { return }
                    handler.respond(response, streamID: streamID, context: context)
                    context.flush()
                }
            case .goAway(let reason):
                sendGoAway(reason: reason)
            case .neverAnswer:
                break
            }
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
