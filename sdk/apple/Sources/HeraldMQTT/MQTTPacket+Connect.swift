import NIOCore

extension MQTTPacket {
    /// CONNECT: the first packet a client sends. Always protocol "MQTT", level 4.
    ///
    /// A client identifier may be empty; the specification then requires a clean session,
    /// which is for the server to enforce (CONNACK 0x02), not the codec.
    public struct Connect: Sendable, Hashable {
        /// The client identifier (may be empty).
        public var clientID: String
        /// Discard any previous session and start a new one.
        public var cleanSession: Bool
        /// Keep-alive interval in seconds; 0 turns the mechanism off.
        public var keepAlive: UInt16
        /// The message the server publishes if the client goes away uncleanly.
        public var will: Will?
        /// The user name, if any.
        public var username: String?
        /// The password, if any: binary data. Needs a `username`.
        public var password: ByteBuffer?

        /// Creates a CONNECT.
        public init(
            clientID: String,
            cleanSession: Bool = true,
            keepAlive: UInt16 = 60,
            will: Will? = nil,
            username: String? = nil,
            password: ByteBuffer? = nil
        ) {
            self.clientID = clientID
            self.cleanSession = cleanSession
            self.keepAlive = keepAlive
            self.will = will
            self.username = username
            self.password = password
        }

        /// A last-will message.
        public struct Will: Sendable, Hashable {
            /// The topic name to publish to (no wildcards).
            public var topic: String
            /// The message body.
            public var message: ByteBuffer
            /// The QoS to publish with.
            public var qos: MQTTQoS
            /// Whether the server retains the message.
            public var retain: Bool

            /// Creates a will.
            public init(topic: String, message: ByteBuffer, qos: MQTTQoS = .atMostOnce, retain: Bool = false) {
                self.topic = topic
                self.message = message
                self.qos = qos
                self.retain = retain
            }
        }
    }
}

extension MQTTPacket.Connect {
    static let protocolName = "MQTT"
    static let protocolLevel: UInt8 = 4

    private enum Flag {
        static let reserved: UInt8 = 0x01
        static let cleanSession: UInt8 = 0x02
        static let will: UInt8 = 0x04
        static let willQoSShift: UInt8 = 3
        static let willQoSMask: UInt8 = 0x18
        static let willRetain: UInt8 = 0x20
        static let password: UInt8 = 0x40
        static let username: UInt8 = 0x80
    }

    init(decoding body: inout ByteBuffer) throws(MQTTProtocolError) {
        guard try body.readMQTTString() == Self.protocolName else {
            throw .unsupportedProtocolName
        }
        guard try body.readMQTTByte() == Self.protocolLevel else {
            throw .unsupportedProtocolLevel
        }
        let flags = try body.readMQTTByte()
        guard flags & Flag.reserved == 0 else {
            throw .connectReservedFlagSet
        }
        let hasWill = flags & Flag.will != 0
        let willQoSBits = (flags & Flag.willQoSMask) >> Flag.willQoSShift
        let willRetain = flags & Flag.willRetain != 0
        guard hasWill || (willQoSBits == 0 && !willRetain) else {
            throw .inconsistentWillFlags
        }
        let willQoS = try MQTTQoS(validating: willQoSBits)
        let hasUsername = flags & Flag.username != 0
        let hasPassword = flags & Flag.password != 0
        guard hasUsername || !hasPassword else {
            throw .passwordWithoutUsername
        }

        self.cleanSession = flags & Flag.cleanSession != 0
        self.keepAlive = try body.readMQTTUInt16()
        self.clientID = try body.readMQTTString()
        if hasWill {
            let topic = try body.readMQTTString()
            try MQTTTopic.validateName(topic)
            let message = try body.readMQTTBinary()
            self.will = Will(topic: topic, message: message, qos: willQoS, retain: willRetain)
        } else {
            self.will = nil
        }
        self.username = hasUsername ? try body.readMQTTString() : nil
        self.password = hasPassword ? try body.readMQTTBinary() : nil
    }

    func encodedBodySize() throws(MQTTProtocolError) -> Int {
        // Protocol name (2 + 4), level, flags, keep-alive.
        var size = 10
        size += try MQTTEncodingSize.string(self.clientID)
        if let will = self.will {
            try MQTTTopic.validateName(will.topic)
            size += try MQTTEncodingSize.string(will.topic)
            size += try MQTTEncodingSize.binary(will.message)
        }
        if let username = self.username {
            size += try MQTTEncodingSize.string(username)
        }
        if let password = self.password {
            guard self.username != nil else {
                throw .passwordWithoutUsername
            }
            size += try MQTTEncodingSize.binary(password)
        }
        return size
    }

    func writeBody(into buffer: inout ByteBuffer) {
        var flags: UInt8 = 0
        if self.cleanSession { flags |= Flag.cleanSession }
        if let will = self.will {
            flags |= Flag.will | will.qos.rawValue << Flag.willQoSShift
            if will.retain { flags |= Flag.willRetain }
        }
        if self.username != nil { flags |= Flag.username }
        if self.password != nil { flags |= Flag.password }

        buffer.writeMQTTString(Self.protocolName)
        buffer.writeInteger(Self.protocolLevel)
        buffer.writeInteger(flags)
        buffer.writeInteger(self.keepAlive, endianness: .big)
        buffer.writeMQTTString(self.clientID)
        if let will = self.will {
            buffer.writeMQTTString(will.topic)
            buffer.writeMQTTBinary(will.message)
        }
        if let username = self.username {
            buffer.writeMQTTString(username)
        }
        if let password = self.password {
            buffer.writeMQTTBinary(password)
        }
    }
}
