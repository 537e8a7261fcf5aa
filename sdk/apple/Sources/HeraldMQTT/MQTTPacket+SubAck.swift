import NIOCore

extension MQTTPacket {
    /// SUBACK: the server's answer to SUBSCRIBE, one return code per topic filter, in order.
    public struct SubAck: Sendable, Hashable {
        /// The packet identifier of the SUBSCRIBE being answered. Never 0.
        public var packetID: UInt16
        /// One code per requested subscription, at least one.
        public var returnCodes: [ReturnCode]

        /// Creates a SUBACK.
        public init(packetID: UInt16, returnCodes: [ReturnCode]) {
            self.packetID = packetID
            self.returnCodes = returnCodes
        }

        /// The outcome of one subscription.
        public enum ReturnCode: UInt8, Sendable, Hashable, CaseIterable {
            /// Granted with maximum QoS 0.
            case grantedQoS0 = 0x00
            /// Granted with maximum QoS 1.
            case grantedQoS1 = 0x01
            /// Granted with maximum QoS 2.
            case grantedQoS2 = 0x02
            /// Refused.
            case failure = 0x80

            /// The code granting `qos`.
            public init(granted qos: MQTTQoS) {
                switch qos {
                case .atMostOnce: self = .grantedQoS0
                case .atLeastOnce: self = .grantedQoS1
                case .exactlyOnce: self = .grantedQoS2
                }
            }

            /// The granted QoS, or `nil` for ``failure``.
            public var grantedQoS: MQTTQoS? {
                MQTTQoS(rawValue: self.rawValue)
            }
        }
    }
}

extension MQTTPacket.SubAck {
    init(decoding body: inout ByteBuffer) throws(MQTTProtocolError) {
        self.packetID = try body.readMQTTPacketID()
        guard body.readableBytes > 0 else {
            throw .emptySubAck
        }
        self.returnCodes = []
        self.returnCodes.reserveCapacity(body.readableBytes)
        while let raw = body.readInteger(as: UInt8.self) {
            guard let code = ReturnCode(rawValue: raw) else {
                throw .invalidSubAckReturnCode
            }
            self.returnCodes.append(code)
        }
    }

    func encodedBodySize() throws(MQTTProtocolError) -> Int {
        guard !self.returnCodes.isEmpty else {
            throw .emptySubAck
        }
        return try MQTTEncodingSize.packetID(self.packetID) + self.returnCodes.count
    }

    func writeBody(into buffer: inout ByteBuffer) {
        buffer.writeInteger(self.packetID, endianness: .big)
        for code in self.returnCodes {
            buffer.writeInteger(code.rawValue)
        }
    }
}
