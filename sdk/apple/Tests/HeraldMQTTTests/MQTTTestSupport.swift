import HeraldMQTT
import NIOCore

/// A buffer holding exactly `bytes`.
func buffer(_ bytes: [UInt8]) -> ByteBuffer {
    ByteBuffer(bytes: bytes)
}

/// A buffer holding the UTF-8 of `string`.
func buffer(_ string: String) -> ByteBuffer {
    ByteBuffer(string: string)
}

/// The wire form of `packet`.
func encode(_ packet: MQTTPacket) throws(MQTTProtocolError) -> ByteBuffer {
    var out = ByteBuffer()
    try MQTTPacketEncoder().write(packet, into: &out)
    return out
}

/// The wire form of `packet` as an array.
func encodedBytes(_ packet: MQTTPacket) throws(MQTTProtocolError) -> [UInt8] {
    Array(try encode(packet).readableBytesView)
}

/// Decodes one packet from `bytes`; `nil` if more data is needed.
func decode(
    _ bytes: [UInt8],
    maximumPacketSize: Int = 1 << 24
) throws(MQTTProtocolError) -> MQTTPacket? {
    var input = buffer(bytes)
    var decoder = MQTTPacketDecoder(maximumPacketSize: maximumPacketSize)
    return try decoder.decode(buffer: &input)
}

/// Frames `body` as a packet whose first byte is `first` (remaining length < 128).
func packet(_ first: UInt8, _ body: [UInt8]) -> [UInt8] {
    precondition(body.count < 128)
    return [first, UInt8(body.count)] + body
}

/// A length-prefixed MQTT string field from raw bytes.
func field(_ bytes: [UInt8]) -> [UInt8] {
    [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
}

/// A length-prefixed MQTT string field from text.
func field(_ string: String) -> [UInt8] {
    field(Array(string.utf8))
}

/// A CONNECT body with the given protocol name, level and flags, keep-alive 60 and
/// client id "c", followed by `rest`.
func connectBody(name: String = "MQTT", level: UInt8 = 4, flags: UInt8, rest: [UInt8] = []) -> [UInt8] {
    field(name) + [level, flags, 0x00, 0x3C] + field("c") + rest
}
