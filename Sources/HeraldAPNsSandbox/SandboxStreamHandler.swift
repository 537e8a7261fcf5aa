import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2

/// One request stream on a sandbox connection: gathers headers and body, then answers
/// as the connection's ``SandboxRootHandler`` decides.
final class SandboxStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let root: NIOLoopBound<SandboxRootHandler>
    private var method = ""
    private var path = ""
    private var headers: [String: [String]] = [:]
    private var body: [UInt8] = []

    init(root: NIOLoopBound<SandboxRootHandler>) {
        self.root = root
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            for (name, value, _) in frame.headers {
                switch name {
                case ":method": method = value
                case ":path": path = value
                case let pseudo where pseudo.hasPrefix(":"): break
                default: headers[name.lowercased(), default: []].append(value)
                }
            }
            if frame.endStream { complete(context: context) }
        case .data(let frame):
            if case .byteBuffer(var buffer) = frame.data {
                body.append(contentsOf: buffer.readBytes(length: buffer.readableBytes) ?? [])
            }
            if frame.endStream { complete(context: context) }
        default:
            break
        }
    }

    private func complete(context: ChannelHandlerContext) {
        let request = SandboxRequest(method: method, path: path, headers: headers, body: body)
        let streamID = (try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)) ?? .rootStream
        switch root.value.handle(request, streamID: streamID) {
        case .respond(let response):
            respond(response, context: context)
        case .respondAfter(let delay, let response):
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(
                in: .nanoseconds(Int64(delay.components.seconds) * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000)
            ) {
                loopBound.value.0.respond(response, context: loopBound.value.1)
            }
        case .neverAnswer, .goAway, nil:
            break
        }
    }

    private func respond(_ response: SandboxResponse, context: ChannelHandlerContext) {
        let headers: HPACKHeaders = [":status": String(response.status), "apns-id": response.apnsID.uuidString.lowercased()]
        guard let body = response.body else {
            context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: headers, endStream: true))), promise: nil)
            return
        }
        var withType = headers
        withType.add(name: "content-type", value: "application/json")
        context.write(wrapOutboundOut(.headers(.init(headers: withType))), promise: nil)
        let buffer = context.channel.allocator.buffer(bytes: body)
        context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(buffer), endStream: true))), promise: nil)
    }
}
