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
    /// `apns-id`, echoed by APNs; unique per request.
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
