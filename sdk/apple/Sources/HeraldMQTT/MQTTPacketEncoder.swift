import NIOCore

/// Encodes MQTT 3.1.1 packets, in a channel pipeline (`MessageToByteHandler`) or directly
/// into a buffer with ``write(_:into:)``.
///
/// The encoder refuses what the decoder would reject (packet identifier 0, wildcards in a
/// topic name, a string with U+0000 or over 65,535 bytes, ...), so every packet it writes
/// decodes back to an equal value. A refused packet leaves the buffer untouched.
public struct MQTTPacketEncoder: MessageToByteEncoder, Sendable {
    public typealias OutboundIn = MQTTPacket

    /// Creates an encoder.
    public init() {}

    /// Encodes `data` into `out`; see ``write(_:into:)``.
    public func encode(data: MQTTPacket, out: inout ByteBuffer) throws {
        try self.write(data, into: &out)
    }

    /// Appends the wire form of `packet` to `buffer`.
    ///
    /// The output size is computed first and reserved once; a PUBLISH payload is copied
    /// into `buffer` in one go and not otherwise touched. To send one message to many
    /// connections, write it once and hand each connection the same buffer.
    /// - Throws: ``MQTTProtocolError`` if the packet cannot be represented on the wire.
    public func write(_ packet: MQTTPacket, into buffer: inout ByteBuffer) throws(MQTTProtocolError) {
        let flags = packet.type.requiredFlags ?? 0
        switch packet {
        case .connect(let connect):
            let size = try Self.checkedSize(connect.encodedBodySize())
            buffer.reserveCapacity(minimumWritableBytes: 5 + size)
            buffer.writeMQTTFixedHeader(type: .connect, flags: flags, remainingLength: size)
            connect.writeBody(into: &buffer)
        case .connAck(let connAck):
            let size = try connAck.encodedBodySize()
            buffer.writeMQTTFixedHeader(type: .connAck, flags: flags, remainingLength: size)
            connAck.writeBody(into: &buffer)
        case .publish(let publish):
            let size = try Self.checkedSize(publish.encodedBodySize())
            buffer.reserveCapacity(minimumWritableBytes: 5 + size)
            buffer.writeMQTTFixedHeader(type: .publish, flags: publish.fixedHeaderFlags, remainingLength: size)
            publish.writeBody(into: &buffer)
        case .pubAck(let packetID), .pubRec(let packetID), .pubRel(let packetID), .pubComp(let packetID),
            .unsubAck(let packetID):
            let size = try MQTTEncodingSize.packetID(packetID)
            buffer.writeMQTTFixedHeader(type: packet.type, flags: flags, remainingLength: size)
            buffer.writeInteger(packetID, endianness: .big)
        case .subscribe(let subscribe):
            let size = try Self.checkedSize(subscribe.encodedBodySize())
            buffer.reserveCapacity(minimumWritableBytes: 5 + size)
            buffer.writeMQTTFixedHeader(type: .subscribe, flags: flags, remainingLength: size)
            subscribe.writeBody(into: &buffer)
        case .subAck(let subAck):
            let size = try Self.checkedSize(subAck.encodedBodySize())
            buffer.reserveCapacity(minimumWritableBytes: 5 + size)
            buffer.writeMQTTFixedHeader(type: .subAck, flags: flags, remainingLength: size)
            subAck.writeBody(into: &buffer)
        case .unsubscribe(let unsubscribe):
            let size = try Self.checkedSize(unsubscribe.encodedBodySize())
            buffer.reserveCapacity(minimumWritableBytes: 5 + size)
            buffer.writeMQTTFixedHeader(type: .unsubscribe, flags: flags, remainingLength: size)
            unsubscribe.writeBody(into: &buffer)
        case .pingReq, .pingResp, .disconnect:
            buffer.writeMQTTFixedHeader(type: packet.type, flags: flags, remainingLength: 0)
        }
    }

    private static func checkedSize(_ size: Int) throws(MQTTProtocolError) -> Int {
        guard size <= mqttMaximumRemainingLength else {
            throw .packetTooLarge
        }
        return size
    }
}
