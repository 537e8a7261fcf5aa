import NIOCore

/// Decodes MQTT 3.1.1 packets from a byte stream, one packet per step.
///
/// Every packet type is decoded, so the same decoder serves the server (reading client
/// packets) and the client (reading server packets); which types are acceptable in which
/// state is the caller's business.
///
/// Malformed input throws an ``MQTTProtocolError``; nothing traps. A fixed header whose
/// packet size exceeds ``maximumPacketSize`` is rejected as soon as the header is complete,
/// before its body arrives, so the decoder never waits on more than that many bytes.
/// After an error the stream cannot be resynchronised: close the connection.
public struct MQTTPacketDecoder: NIOSingleStepByteToMessageDecoder, Sendable {
    public typealias InboundOut = MQTTPacket

    /// The largest whole packet accepted, fixed header included, in bytes.
    public let maximumPacketSize: Int

    /// Creates a decoder.
    /// - Parameter maximumPacketSize: The largest whole packet to accept, fixed header
    ///   included. At least 2 (the size of PINGREQ).
    public init(maximumPacketSize: Int) {
        precondition(maximumPacketSize >= 2, "maximumPacketSize must be at least 2")
        self.maximumPacketSize = maximumPacketSize
    }

    /// Decodes one packet, or returns `nil` if more bytes are needed.
    /// Consumes nothing until a whole packet is present.
    public mutating func decode(buffer: inout ByteBuffer) throws(MQTTProtocolError) -> MQTTPacket? {
        guard let header = try buffer.peekMQTTFixedHeader() else {
            return nil
        }
        guard header.packetLength <= self.maximumPacketSize else {
            throw .packetTooLarge
        }
        guard buffer.readableBytes >= header.packetLength else {
            return nil
        }
        buffer.moveReaderIndex(forwardBy: header.headerLength)
        guard var body = buffer.readSlice(length: header.remainingLength) else {
            // Unreachable: the length was checked above.
            throw .truncatedPacket
        }
        return try MQTTPacket.decode(type: header.type, flags: header.flags, body: &body)
    }

    /// Decodes what is left once the stream ends. A partial packet stays in the buffer,
    /// which `ByteToMessageHandler` reports as left-over data.
    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws(MQTTProtocolError) -> MQTTPacket? {
        try self.decode(buffer: &buffer)
    }
}
