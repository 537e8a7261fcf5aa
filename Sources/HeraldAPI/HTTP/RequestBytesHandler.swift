import NIOCore

/// Ahead of the HTTP decoder: tells ``HTTPEdgeHandler`` that bytes arrived, so a request
/// that trickles in (headers a byte at a time never make a decoded part) is timed from
/// its first byte.
final class RequestBytesHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The event it sends down the pipeline with every read.
    struct BytesArrived {}

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireUserInboundEventTriggered(BytesArrived())
        context.fireChannelRead(data)
    }
}
