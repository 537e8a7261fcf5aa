import NIOCore

extension MQTTPacket {
    /// CONNACK: the server's answer to CONNECT.
    public struct ConnAck: Sendable, Hashable {
        /// Whether the server resumed a stored session. Always `false` with a refusal.
        public var sessionPresent: Bool
        /// Accepted, or why not.
        public var returnCode: ReturnCode

        /// Creates a CONNACK.
        public init(sessionPresent: Bool = false, returnCode: ReturnCode) {
            self.sessionPresent = sessionPresent
            self.returnCode = returnCode
        }

        /// The CONNACK return codes of MQTT 3.1.1.
        public enum ReturnCode: UInt8, Sendable, Hashable, CaseIterable {
            /// 0x00: connection accepted.
            case accepted = 0
            /// 0x01: the server does not support the requested protocol level.
            case unacceptableProtocolVersion = 1
            /// 0x02: the client identifier is not allowed.
            case identifierRejected = 2
            /// 0x03: the MQTT service is unavailable.
            case serverUnavailable = 3
            /// 0x04: the user name or password is malformed.
            case badUsernameOrPassword = 4
            /// 0x05: the client is not authorised to connect.
            case notAuthorized = 5
        }
    }
}

extension MQTTPacket.ConnAck {
    private static let sessionPresentFlag: UInt8 = 0x01

    init(decoding body: inout ByteBuffer) throws(MQTTProtocolError) {
        let flags = try body.readMQTTByte()
        let rawCode = try body.readMQTTByte()
        guard flags & ~Self.sessionPresentFlag == 0 else {
            throw .invalidConnAckFlags
        }
        guard let returnCode = ReturnCode(rawValue: rawCode) else {
            throw .invalidConnAckReturnCode
        }
        let sessionPresent = flags & Self.sessionPresentFlag != 0
        guard !sessionPresent || returnCode == .accepted else {
            throw .invalidConnAckFlags
        }
        self.init(sessionPresent: sessionPresent, returnCode: returnCode)
    }

    func encodedBodySize() throws(MQTTProtocolError) -> Int {
        guard !self.sessionPresent || self.returnCode == .accepted else {
            throw .invalidConnAckFlags
        }
        return 2
    }

    func writeBody(into buffer: inout ByteBuffer) {
        buffer.writeInteger(self.sessionPresent ? Self.sessionPresentFlag : 0)
        buffer.writeInteger(self.returnCode.rawValue)
    }
}
