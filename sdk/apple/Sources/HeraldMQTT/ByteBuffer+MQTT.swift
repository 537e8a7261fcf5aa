import NIOCore

/// The largest remaining length the four-byte variable-length encoding can carry.
let mqttMaximumRemainingLength = 268_435_455

// MARK: - Reading packet fields

extension ByteBuffer {
    /// Reads one byte of a packet body.
    mutating func readMQTTByte() throws(MQTTProtocolError) -> UInt8 {
        guard let byte = self.readInteger(as: UInt8.self) else {
            throw .truncatedPacket
        }
        return byte
    }

    /// Reads a big-endian two-byte integer of a packet body.
    mutating func readMQTTUInt16() throws(MQTTProtocolError) -> UInt16 {
        guard let value = self.readInteger(endianness: .big, as: UInt16.self) else {
            throw .truncatedPacket
        }
        return value
    }

    /// Reads a packet identifier, which must not be 0.
    mutating func readMQTTPacketID() throws(MQTTProtocolError) -> UInt16 {
        let packetID = try self.readMQTTUInt16()
        guard packetID != 0 else {
            throw .invalidPacketID
        }
        return packetID
    }

    /// Reads a length-prefixed UTF-8 string: well-formed UTF-8 and free of U+0000.
    /// A byte order mark is kept, as the specification requires.
    mutating func readMQTTString() throws(MQTTProtocolError) -> String {
        let length = Int(try self.readMQTTUInt16())
        guard let bytes = self.viewBytes(at: self.readerIndex, length: length) else {
            throw .truncatedPacket
        }
        guard !bytes.contains(0) else {
            throw .stringContainsNull
        }
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw .invalidUTF8String
        }
        self.moveReaderIndex(forwardBy: length)
        return string
    }

    /// Reads length-prefixed binary data as a slice sharing this buffer's storage.
    mutating func readMQTTBinary() throws(MQTTProtocolError) -> ByteBuffer {
        let length = Int(try self.readMQTTUInt16())
        guard let data = self.readSlice(length: length) else {
            throw .truncatedPacket
        }
        return data
    }
}

// MARK: - Fixed header

/// A fixed header read from the front of a buffer without consuming it.
struct MQTTFixedHeader: Hashable {
    var type: MQTTPacketType
    var flags: UInt8
    var remainingLength: Int
    /// Bytes taken by the header itself: 1 + the length of the remaining-length field.
    var headerLength: Int

    var packetLength: Int { self.headerLength + self.remainingLength }
}

extension ByteBuffer {
    /// Looks at the fixed header at the reader index. Returns `nil` while the header is
    /// incomplete, and throws as soon as the bytes present are enough to tell it is bad.
    func peekMQTTFixedHeader() throws(MQTTProtocolError) -> MQTTFixedHeader? {
        guard let first = self.getInteger(at: self.readerIndex, as: UInt8.self) else {
            return nil
        }
        guard let type = MQTTPacketType(rawValue: first >> 4) else {
            throw .reservedPacketType
        }
        let flags = first & 0x0F
        if let required = type.requiredFlags {
            guard flags == required else {
                throw .invalidFixedHeaderFlags
            }
        } else {
            try MQTTPacket.Publish.validateFixedHeaderFlags(flags)
        }

        var remainingLength = 0
        var multiplier = 1
        for offset in 1...4 {
            guard let byte = self.getInteger(at: self.readerIndex + offset, as: UInt8.self) else {
                return nil
            }
            remainingLength += Int(byte & 0x7F) * multiplier
            if byte & 0x80 == 0 {
                return MQTTFixedHeader(
                    type: type,
                    flags: flags,
                    remainingLength: remainingLength,
                    headerLength: 1 + offset
                )
            }
            multiplier *= 128
        }
        throw .malformedRemainingLength
    }
}

// MARK: - Writing packet fields

extension ByteBuffer {
    /// Writes the fixed header: type and flags, then the variable-length remaining length.
    /// `remainingLength` must be in `0...mqttMaximumRemainingLength`.
    @discardableResult
    mutating func writeMQTTFixedHeader(type: MQTTPacketType, flags: UInt8, remainingLength: Int) -> Int {
        var written = self.writeInteger(type.rawValue << 4 | flags)
        var value = remainingLength
        repeat {
            var byte = UInt8(truncatingIfNeeded: value & 0x7F)
            value >>= 7
            if value > 0 {
                byte |= 0x80
            }
            written += self.writeInteger(byte)
        } while value > 0
        return written
    }

    /// Writes a length-prefixed string already checked by ``MQTTEncodingSize/string(_:)``.
    mutating func writeMQTTString(_ string: String) {
        self.writeInteger(UInt16(truncatingIfNeeded: string.utf8.count), endianness: .big)
        self.writeString(string)
    }

    /// Writes length-prefixed binary data already checked by ``MQTTEncodingSize/binary(_:)``.
    mutating func writeMQTTBinary(_ data: ByteBuffer) {
        self.writeInteger(UInt16(truncatingIfNeeded: data.readableBytes), endianness: .big)
        self.writeImmutableBuffer(data)
    }
}

/// Size checks run before anything is written, so a packet that cannot be encoded leaves
/// the output buffer untouched.
enum MQTTEncodingSize {
    /// The encoded size of a string field; rejects U+0000 and strings over 65,535 bytes.
    static func string(_ string: String) throws(MQTTProtocolError) -> Int {
        let utf8 = string.utf8
        guard utf8.count <= Int(UInt16.max) else {
            throw .fieldTooLong
        }
        guard !utf8.contains(0) else {
            throw .stringContainsNull
        }
        return 2 + utf8.count
    }

    /// The encoded size of a binary field; rejects data over 65,535 bytes.
    static func binary(_ data: ByteBuffer) throws(MQTTProtocolError) -> Int {
        guard data.readableBytes <= Int(UInt16.max) else {
            throw .fieldTooLong
        }
        return 2 + data.readableBytes
    }

    /// Checks a packet identifier that the packet requires.
    static func packetID(_ packetID: UInt16) throws(MQTTProtocolError) -> Int {
        guard packetID != 0 else {
            throw .invalidPacketID
        }
        return 2
    }
}
