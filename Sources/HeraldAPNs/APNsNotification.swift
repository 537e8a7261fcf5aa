import Foundation
import HeraldCore

/// One push to one device, as the message center hands it over.
public struct APNsNotification: Sendable, Hashable {
    /// The device (or PushKit) token, hex.
    public var deviceToken: String
    public var pushType: APNsPushType
    /// The JSON body (the `aps` dictionary and custom keys).
    public var payload: [UInt8]
    /// nil picks the type's default: 5 for background pushes, 10 otherwise.
    public var priority: APNsPriority?
    /// When APNs may stop trying; `Date(timeIntervalSince1970: 0)` means try once. nil sends no header.
    public var expiration: Date?
    /// Becomes the notification's identifier on the device (replace and recall); at most 64 bytes.
    public var collapseID: String?
    /// `apns-id`, echoed by APNs: the notification's identity, the same on every attempt
    /// of one copy (``copyID(msgID:deviceToken:pushType:)``).
    public var apnsID: UUID
    /// Overrides the topic made from the bundle id and the type's suffix.
    public var topic: String?

    public init(
        deviceToken: String,
        pushType: APNsPushType = .alert,
        payload: [UInt8],
        priority: APNsPriority? = nil,
        expiration: Date? = nil,
        collapseID: String? = nil,
        apnsID: UUID = .unique(),
        topic: String? = nil
    ) {
        self.deviceToken = deviceToken
        self.pushType = pushType
        self.payload = payload
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.topic = topic
    }

    /// The `apns-id` of every request of one copy of a message: the same on each attempt,
    /// so a request sent again after its deadline (it may have reached APNs, answered too
    /// late) is the same notification, with the same collapse id, not a new one. Two
    /// 64-bit FNV-1a hashes of the copy's message, token and push type, as an RFC 9562
    /// version 8 UUID: an identity, not a secret.
    public static func copyID(msgID: String, deviceToken: String, pushType: APNsPushType) -> UUID {
        var first: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in msgID.utf8 + [0] + deviceToken.lowercased().utf8 + [0] + pushType.rawValue.utf8 {
            first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            second = (second ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            second = (second << 7) | (second >> 57)
        }
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<8 {
            bytes[index] = UInt8(truncatingIfNeeded: first >> (8 * index))
            bytes[8 + index] = UInt8(truncatingIfNeeded: second >> (8 * index))
        }
        bytes[6] = (bytes[6] & 0x0f) | 0x80
        bytes[8] = (bytes[8] & 0x3f) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            )
        )
    }

    /// The priority actually sent: background pushes must go at 5.
    var effectivePriority: APNsPriority {
        if pushType == .background { return .powerConsiderate }
        return priority ?? .immediate
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }

    /// Rejects what APNs would refuse, before anything is sent.
    func validate() throws(APNsError) {
        if payload.isEmpty { throw .payloadEmpty }
        if payload.count > pushType.payloadLimit { throw .payloadTooLarge }
        if let collapseID, collapseID.utf8.count > 64 { throw .collapseIDTooLong }
        guard !deviceToken.isEmpty, deviceToken.utf8.allSatisfy(Self.isHexDigit) else {
            throw .invalidDeviceToken
        }
    }
}
