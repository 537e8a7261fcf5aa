// libFuzzer harness for MQTTPacketDecoder. Built by scripts/fuzz-mqtt.sh, which compiles
// this file in one module with sdk/apple/Sources/HeraldMQTT/*.swift (so there is no
// `import HeraldMQTT`) and links NIOCore built by SwiftPM.
import NIOCore

/// The decoder's maximum in the fuzzer: small, so the size limit is exercised too.
private let maximumPacketSize = 4096

/// What decoding a stream produced: the packets, then how it stopped.
private struct Outcome: Equatable {
    var packets: [MQTTPacket] = []
    var error: MQTTProtocolError? = nil
}

/// Feeds `input` to a fresh decoder in chunks of `chunkSize` bytes (or all at once), decoding
/// until it needs more data or throws.
private func decodeStream(_ input: ByteBuffer, chunkSize: Int?) -> Outcome {
    var outcome = Outcome()
    var decoder = MQTTPacketDecoder(maximumPacketSize: maximumPacketSize)
    var remaining = input
    var buffer = ByteBuffer()
    while remaining.readableBytes > 0 {
        var chunk = remaining.readSlice(length: min(chunkSize ?? Int.max, remaining.readableBytes))!
        buffer.writeBuffer(&chunk)
        while true {
            do {
                guard let packet = try decoder.decode(buffer: &buffer) else { break }
                outcome.packets.append(packet)
            } catch {
                outcome.error = error
                return outcome
            }
        }
    }
    return outcome
}

/// Every decoded packet must encode, and the encoding must decode back to the same packet.
private func checkRoundTrip(_ packet: MQTTPacket) {
    var wire = ByteBuffer()
    do {
        try MQTTPacketEncoder().write(packet, into: &wire)
    } catch {
        fatalError("decoded packet does not encode (\(error)): \(packet)")
    }
    var decoder = MQTTPacketDecoder(maximumPacketSize: max(2, wire.readableBytes))
    let again: MQTTPacket?
    do {
        again = try decoder.decode(buffer: &wire)
    } catch {
        fatalError("re-encoded packet does not decode (\(error)): \(packet)")
    }
    guard again == packet, wire.readableBytes == 0 else {
        fatalError("round trip changed the packet: \(packet) became \(String(describing: again))")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let input = ByteBuffer(bytes: UnsafeRawBufferPointer(start: start, count: count))
    let whole = decodeStream(input, chunkSize: nil)
    for packet in whole.packets {
        checkRoundTrip(packet)
    }
    // Drip-feeding must give the same packets and the same error as one big read.
    let dripped = decodeStream(input, chunkSize: 1)
    guard dripped == whole else {
        fatalError("drip-fed decoding differs: \(dripped) vs \(whole)")
    }
    return 0
}
