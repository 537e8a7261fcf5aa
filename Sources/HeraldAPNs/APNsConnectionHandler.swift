import Foundation
import NIOCore
import NIOHTTP2

/// What a connection tells its pool.
struct APNsConnectionEvents: Sendable {
    /// The peer's SETTINGS_MAX_CONCURRENT_STREAMS changed.
    var settings: @Sendable (Int) -> Void
    /// GOAWAY arrived, with the reason from its debug data.
    var goAway: @Sendable (String?) -> Void
}

/// Root-stream frames of a provider connection: the peer's stream limit, GOAWAY, and PING
/// after idleness (closing the connection when no PONG comes).
final class APNsConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private let events: APNsConnectionEvents
    private let ready: EventLoopPromise<Void>
    private let pingInterval: TimeAmount
    private let pingTimeout: TimeAmount
    private var lastRead = NIODeadline.now()
    private var idleCheck: Scheduled<Void>?
    private var pongTimeout: Scheduled<Void>?

    init(events: APNsConnectionEvents, ready: EventLoopPromise<Void>, pingInterval: TimeAmount, pingTimeout: TimeAmount) {
        self.events = events
        self.ready = ready
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        scheduleIdleCheck(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleCheck?.cancel()
        pongTimeout?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastRead = .now()
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .settings(.settings(let settings)):
            if let limit = settings.last(where: { $0.parameter == .maxConcurrentStreams }) {
                events.settings(limit.value)
            }
            ready.succeed()
        case .goAway(_, _, let opaqueData):
            var reason: String?
            if let opaqueData, let object = try? JSONSerialization.jsonObject(with: Data(opaqueData.readableBytesView)) as? [String: Any] {
                reason = object["reason"] as? String
            }
            events.goAway(reason)
        case .ping(_, ack: true):
            pongTimeout?.cancel()
            pongTimeout = nil
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        ready.fail(APNsError.connectionClosed)
        idleCheck?.cancel()
        pongTimeout?.cancel()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        ready.fail(APNsError(.connectionClosed, detail: "\(error)"))
        context.close(promise: nil)
    }

    private func scheduleIdleCheck(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        idleCheck = context.eventLoop.assumeIsolated().scheduleTask(in: pingInterval) {
            let (handler, context) = loopBound.value
            handler.checkIdle(context: context)
        }
    }

    private func checkIdle(context: ChannelHandlerContext) {
        if pongTimeout == nil, NIODeadline.now() - lastRead >= pingInterval {
            let ping = HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: UInt64.random(in: 0...UInt64.max)), ack: false))
            context.writeAndFlush(wrapOutboundOut(ping), promise: nil)
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            pongTimeout = context.eventLoop.assumeIsolated().scheduleTask(in: pingTimeout) {
                loopBound.value.close(promise: nil)
            }
        }
        scheduleIdleCheck(context: context)
    }
}
