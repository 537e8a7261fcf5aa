import NIOCore

extension MQTTPacket {
    /// UNSUBSCRIBE: drop one or more topic filters. Answered by UNSUBACK.
    public struct Unsubscribe: Sendable, Hashable {
        /// The packet identifier, echoed by UNSUBACK. Never 0.
        public var packetID: UInt16
        /// The topic filters to drop, at least one.
        public var topicFilters: [String]

        /// Creates an UNSUBSCRIBE.
        public init(packetID: UInt16, topicFilters: [String]) {
            self.packetID = packetID
            self.topicFilters = topicFilters
        }
    }
}

extension MQTTPacket.Unsubscribe {
    init(decoding body: inout ByteBuffer) throws(MQTTProtocolError) {
        self.packetID = try body.readMQTTPacketID()
        self.topicFilters = []
        while body.readableBytes > 0 {
            let filter = try body.readMQTTString()
            try MQTTTopic.validateFilter(filter)
            self.topicFilters.append(filter)
        }
        guard !self.topicFilters.isEmpty else {
            throw .emptyUnsubscribe
        }
    }

    func encodedBodySize() throws(MQTTProtocolError) -> Int {
        var size = try MQTTEncodingSize.packetID(self.packetID)
        guard !self.topicFilters.isEmpty else {
            throw .emptyUnsubscribe
        }
        for filter in self.topicFilters {
            try MQTTTopic.validateFilter(filter)
            size += try MQTTEncodingSize.string(filter)
        }
        return size
    }

    func writeBody(into buffer: inout ByteBuffer) {
        buffer.writeInteger(self.packetID, endianness: .big)
        for filter in self.topicFilters {
            buffer.writeMQTTString(filter)
        }
    }
}
