import Foundation
import HeraldHTTP2
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// Sits on an HTTP/2 sandbox connection after the HTTP/2 handler and sees every frame:
/// gathers each stream's request and answers the requests completed during one read
/// together when the read ends, under one turn of the sandbox's lock and with one flush.
/// Streams are values keyed by id, not child channels: the sandbox must not be the
/// bottleneck of a benchmark that shares its machine (as the APNs sandbox's
/// `SandboxRootHandler`).
final class FCMSandboxHTTP2Handler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private let state: NIOLockedValueBox<FCMSandboxState>
    private var streams: [HTTP2StreamID: FCMSandboxRequest] = [:]
    private var completed: [(streamID: HTTP2StreamID, request: FCMSandboxRequest)] = []
    private var needsFlush = false
    private var window = HTTP2ReceiveWindow()

    init(state: NIOLockedValueBox<FCMSandboxState>) {
        self.state = state
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let streamID = frame.streamID
        guard streamID != .rootStream else { return }
        switch frame.payload {
        case .headers(let headers):
            for (name, value, _) in headers.headers {
                switch name {
                case ":method": streams[streamID, default: FCMSandboxRequest()].method = value
                case ":path": streams[streamID, default: FCMSandboxRequest()].path = value
                case "authorization": streams[streamID, default: FCMSandboxRequest()].authorization = value
                default: break
                }
            }
            if headers.endStream { complete(streamID) }
        case .data(let data):
            if case .byteBuffer(let buffer) = data.data {
                streams[streamID, default: FCMSandboxRequest()].body.append(contentsOf: buffer.readableBytesView)
            }
            replenishWindows(streamID: streamID, data: data, context: context)
            if data.endStream { complete(streamID) }
        case .rstStream:
            streams[streamID] = nil
        default:
            break
        }
    }

    private func complete(_ streamID: HTTP2StreamID) {
        guard let request = streams.removeValue(forKey: streamID) else { return }
        completed.append((streamID, request))
    }

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
            let now = Date()
            let answers = state.withLockedValue { state in batch.map { state.answer($0.request, now: now) } }
            for ((streamID, _), answer) in zip(batch, answers) {
                var headers = HPACKHeaders()
                headers.add(name: ":status", value: answer.status == 200 ? "200" : String(answer.status))
                headers.add(name: "content-type", value: "application/json; charset=UTF-8")
                for (name, value) in answer.headers { headers.add(name: name, value: value) }
                context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers)))), promise: nil)
                let body = context.channel.allocator.buffer(bytes: answer.body)
                context.write(
                    wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(body), endStream: true)))),
                    promise: nil
                )
            }
            needsFlush = true
        }
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }
}

/// The same routes over HTTP/1.1, for clients that ask the token endpoint that way
/// (google-auth's requests transport).
final class FCMSandboxHTTP1Handler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let state: NIOLockedValueBox<FCMSandboxState>
    private var request = FCMSandboxRequest()
    private var keepAlive = true

    init(state: NIOLockedValueBox<FCMSandboxState>) {
        self.state = state
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            request = FCMSandboxRequest(method: head.method.rawValue, path: head.uri, authorization: head.headers.first(name: "authorization"))
            keepAlive = head.isKeepAlive
        case .body(let buffer):
            request.body.append(contentsOf: buffer.readableBytesView)
        case .end:
            let request = self.request
            let answer = state.withLockedValue { $0.answer(request, now: Date()) }
            var headers = HTTPHeaders([("content-type", "application/json; charset=UTF-8"), ("content-length", String(answer.body.count))])
            for (name, value) in answer.headers { headers.add(name: name, value: value) }
            if !keepAlive { headers.add(name: "connection", value: "close") }
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .init(statusCode: answer.status), headers: headers))),
                promise: nil
            )
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: answer.body)))), promise: nil)
            let keepAlive = self.keepAlive
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                if !keepAlive { loopBound.value.close(promise: nil) }
            }
        }
    }
}
