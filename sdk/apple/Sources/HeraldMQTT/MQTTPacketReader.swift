import NIOCore

/// Cuts MQTT packets out of a byte stream read in arbitrary pieces, for a channel handler
/// that decodes itself instead of putting a `ByteToMessageHandler` in front of it.
///
/// It holds bytes only while a packet is incomplete: once every packet of what was read is
/// decoded, it keeps no buffer, so an idle connection costs nothing here.
public struct MQTTPacketReader: Sendable {
    private var decoder: MQTTPacketDecoder
    private var pending: ByteBuffer?

    /// Creates a reader; see ``MQTTPacketDecoder/init(maximumPacketSize:)``.
    public init(maximumPacketSize: Int) {
        self.decoder = MQTTPacketDecoder(maximumPacketSize: maximumPacketSize)
    }

    /// Bytes received and not yet decoded into a packet.
    public var bufferedBytes: Int { pending?.readableBytes ?? 0 }

    /// Appends bytes read from the stream.
    public mutating func append(_ bytes: ByteBuffer) {
        if pending == nil {
            pending = bytes
        } else {
            pending!.writeImmutableBuffer(bytes)
        }
    }

    /// The next whole packet, or `nil` until more bytes arrive.
    /// - Throws: ``MQTTProtocolError`` for malformed input; the stream cannot continue.
    public mutating func next() throws(MQTTProtocolError) -> MQTTPacket? {
        guard var buffer = pending else { return nil }
        pending = nil
        let packet = try decoder.decode(buffer: &buffer)
        if buffer.readableBytes > 0 {
            // Waiting for the rest of a packet: keep only its bytes, not all that was read.
            if packet == nil, buffer.readerIndex > 0 { buffer.discardReadBytes() }
            pending = buffer
        }
        return packet
    }
}
