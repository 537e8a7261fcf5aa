import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// The API's HTTP/1.1 connections: Hummingbird's request loop over its usual pipeline,
/// with ``RequestBytesHandler`` ahead of the decoder and ``HTTPEdgeHandler`` behind the
/// codec (deadlines, the JSON answer to malformed requests, closing after
/// `Connection: close`).
struct HeraldHTTPChannel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    let responder: HTTPChannelHandler.Responder
    let deadlines: HTTPDeadlines<ContinuousClock.Instant>.Configuration

    /// Hummingbird's limits: 80 KiB for a header field and for all of them (request line
    /// included), 1,000 fields.
    static let decoderLimits: NIOHTTPDecoderLimitConfiguration = {
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = 80 * 1024
        limits.maxHeaderListSize = 80 * 1024
        limits.maxHeaderFieldCount = 1000
        return limits
    }()

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(RequestBytesHandler())
            try pipeline.configureHTTPServerPipeline(
                withPipeliningAssistance: false,
                withErrorHandling: false,
                withOutboundHeaderValidation: false,
                withEncoderConfiguration: .init(),
                withDecoderLimitConfiguration: Self.decoderLimits
            )
            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            try pipeline.addHandler(HTTPEdgeHandler(configuration: deadlines, logger: logger))
            // Hummingbird's own: closes idle connections on graceful shutdown.
            try pipeline.addHandler(HTTPConnectionStateHandler(logger: logger))
            return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
        }
    }

    func handle(value asyncChannel: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: asyncChannel, logger: logger)
    }
}
