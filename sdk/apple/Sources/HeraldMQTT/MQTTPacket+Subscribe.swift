import NIOCore

extension MQTTPacket {
    /// SUBSCRIBE: one or more topic filters, each with the highest QoS the client wants.
    public struct Subscribe: Sendable, Hashable {
        /// The packet identifier, echoed by SUBACK. Never 0.
        public var packetID: UInt16
        /// The requested subscriptions, at least one.
        public var subscriptions: [Subscription]

        /// Creates a SUBSCRIBE.
        public init(packetID: UInt16, subscriptions: [Subscription]) {
            self.packetID = packetID
            self.subscriptions = subscriptions
        }

        /// One topic filter and its requested QoS.
        public struct Subscription: Sendable, Hashable {
            /// The topic filter; may contain `+` and `#` wildcards.
            public var topicFilter: String
            /// The highest QoS the client wants for this filter.
            public var qos: MQTTQoS

            /// Creates a subscription.
            public init(topicFilter: String, qos: MQTTQoS) {
                self.topicFilter = topicFilter
                self.qos = qos
            }
        }
    }
}

extension MQTTPacket.Subscribe {
    init(decoding body: inout ByteBuffer) throws(MQTTProtocolError) {
        self.packetID = try body.readMQTTPacketID()
        self.subscriptions = []
        while body.readableBytes > 0 {
            let filter = try body.readMQTTString()
            try MQTTTopic.validateFilter(filter)
            let options = try body.readMQTTByte()
            guard options & 0xFC == 0 else {
                throw .invalidSubscriptionOptions
            }
            self.subscriptions.append(Subscription(topicFilter: filter, qos: try MQTTQoS(validating: options)))
        }
        guard !self.subscriptions.isEmpty else {
            throw .emptySubscribe
        }
    }

    func encodedBodySize() throws(MQTTProtocolError) -> Int {
        var size = try MQTTEncodingSize.packetID(self.packetID)
        guard !self.subscriptions.isEmpty else {
            throw .emptySubscribe
        }
        for subscription in self.subscriptions {
            try MQTTTopic.validateFilter(subscription.topicFilter)
            size += try MQTTEncodingSize.string(subscription.topicFilter) + 1
        }
        return size
    }

    func writeBody(into buffer: inout ByteBuffer) {
        buffer.writeInteger(self.packetID, endianness: .big)
        for subscription in self.subscriptions {
            buffer.writeMQTTString(subscription.topicFilter)
            buffer.writeInteger(subscription.qos.rawValue)
        }
    }
}
