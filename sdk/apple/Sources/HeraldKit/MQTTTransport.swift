import HeraldMQTT
import NIOCore

extension MQTTTransport {
    /// Adds the MQTT codec to `channel` and wraps it for async use: the part of a
    /// connection both transports share.
    static func wrap(_ channel: any Channel) throws -> NIOAsyncChannel<MQTTPacket, MQTTPacket> {
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(MQTTPacketDecoder(maximumPacketSize: 1 << 20)))
        try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(MQTTPacketEncoder()))
        return try NIOAsyncChannel<MQTTPacket, MQTTPacket>(wrappingChannelSynchronously: channel)
    }
}
