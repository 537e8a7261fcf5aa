import Foundation
import NIOCore
import NIOHTTP2
import NIOSSL

/// Sits on a sandbox connection after the HTTP/2 handler: holds the connection's
/// authentication state, raises the stream limit, and sends GOAWAY.
final class SandboxRootHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private let sandbox: APNsSandbox
    private var auth: SandboxConnectionAuth
    private var context: ChannelHandlerContext?
    private var certificateChecked = false
    private var lastProcessedStreamID = HTTP2StreamID.rootStream
    private var goingAway = false

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
            context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings(settings)))), promise: nil)
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
