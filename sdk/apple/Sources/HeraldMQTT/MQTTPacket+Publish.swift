import NIOCore

extension MQTTPacket {
    /// PUBLISH: an application message, in either direction.
    ///
    /// A decoded payload is a slice of the received bytes, not a copy. Encoding writes the
    /// payload with one bulk copy into the output buffer, so a message can be encoded once
    /// and the resulting buffer written to many connections.
    public struct Publish: Sendable, Hashable {
        /// The topic name (no wildcards, at least one character).
        public var topic: String
        /// The application message.
        public var payload: ByteBuffer
        /// The delivery guarantee.
        public var qos: MQTTQoS
        /// The packet identifier: present exactly when `qos` is above ``MQTTQoS/atMostOnce``.
        public var packetID: UInt16?
        /// Whether the server should keep this as the topic's retained message.
        public var retain: Bool
        /// Set on a redelivery of a QoS 1 or 2 message; never on QoS 0.
        public var dup: Bool

        /// Creates a PUBLISH.
        public init(
            topic: String,
            payload: ByteBuffer,
            qos: MQTTQoS = .atMostOnce,
            packetID: UInt16? = nil,
            retain: Bool = false,
            dup: Bool = false
        ) {
            self.topic = topic
            self.payload = payload
            self.qos = qos
            self.packetID = packetID
            self.retain = retain
            self.dup = dup
        }
    }
}

extension MQTTPacket.Publish {
    private enum Flag {
        static let retain: UInt8 = 0x01
        static let qosShift: UInt8 = 1
        static let qosMask: UInt8 = 0x06
        static let dup: UInt8 = 0x08
    }

    /// Checks the DUP/QoS/RETAIN bits of a PUBLISH fixed header.
    static func validateFixedHeaderFlags(_ flags: UInt8) throws(MQTTProtocolError) {
        let qos = try MQTTQoS(validating: (flags & Flag.qosMask) >> Flag.qosShift)
        guard qos != .atMostOnce || flags & Flag.dup == 0 else {
            throw .dupFlagWithQoS0
        }
    }

    /// Decodes a body; `flags` have passed ``validateFixedHeaderFlags(_:)``.
    init(decoding body: inout ByteBuffer, flags: UInt8) throws(MQTTProtocolError) {
        try Self.validateFixedHeaderFlags(flags)
        let qos = try MQTTQoS(validating: (flags & Flag.qosMask) >> Flag.qosShift)
        let topic = try body.readMQTTString()
        try MQTTTopic.validateName(topic)
        let packetID = qos == .atMostOnce ? nil : try body.readMQTTPacketID()
        let payload = body.readSlice(length: body.readableBytes) ?? ByteBuffer()
        self.init(
            topic: topic,
            payload: payload,
            qos: qos,
            packetID: packetID,
            retain: flags & Flag.retain != 0,
            dup: flags & Flag.dup != 0
        )
    }

    var fixedHeaderFlags: UInt8 {
        var flags = self.qos.rawValue << Flag.qosShift
        if self.retain { flags |= Flag.retain }
        if self.dup { flags |= Flag.dup }
        return flags
    }

    func encodedBodySize() throws(MQTTProtocolError) -> Int {
        try MQTTTopic.validateName(self.topic)
        var size = try MQTTEncodingSize.string(self.topic)
        switch (self.qos, self.packetID) {
        case (.atMostOnce, nil):
            guard !self.dup else {
                throw .dupFlagWithQoS0
            }
        case (.atLeastOnce, .some(let packetID)), (.exactlyOnce, .some(let packetID)):
            size += try MQTTEncodingSize.packetID(packetID)
        default:
            throw .invalidPacketID
        }
        return size + self.payload.readableBytes
    }

    func writeBody(into buffer: inout ByteBuffer) {
        buffer.writeMQTTString(self.topic)
        if let packetID = self.packetID {
            buffer.writeInteger(packetID, endianness: .big)
        }
        buffer.writeImmutableBuffer(self.payload)
    }
}
