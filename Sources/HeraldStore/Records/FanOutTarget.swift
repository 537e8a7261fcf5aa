import HeraldCore
import PostgresNIO

/// One targeted device of a fan-out batch, with what routing needs.
public struct FanOutTarget: Sendable, Hashable {
    public var deviceID: Int64
    public var registrationID: String
    public var platform: Platform
    public var apnsToken: String?
    public var apnsEnvironment: APNsEnvironment?
    public var voipToken: String?
    public var tokenValid: Bool
    public var inBackground: Bool
    /// Its Firebase Cloud Messaging token (Android).
    public var fcmToken: String? = nil
    /// The position in the device's inbox, when the message is stored.
    public var inboxSeq: Int64?
    /// The device's badge after this push, when the push sets or changes it.
    public var badge: Int?
    /// The app's quiet hours or daily cap held this copy back (state `held` or `dropped`):
    /// it counts in its batch, but is not routed.
    public var isWithheld = false
}

extension FanOutTarget {
    /// The columns every statement selects for a target, from `devices d`, in this order;
    /// the statement follows them with the copy's inbox seq and the device's badge (either
    /// may be null), and decodes them with ``init(_:at:)`` (`herald_node_routes`, migration
    /// 0024, returns them too: change both together).
    static let columns =
        "d.id, d.registration_id, d.platform, d.apns_token, d.apns_environment, d.voip_token, d.token_valid, d.in_background, d.fcm_token"

    /// The device's token for a channel (``HeraldRouting/DeliveryChannel``): its APNs
    /// token, or its FCM token.
    public func token(forChannel channel: String) -> String? {
        switch channel {
        case "apns": apnsToken
        case "fcm": fcmToken
        default: nil
        }
    }

    /// The number of columns ``init(_:at:)`` reads: ``columns``, inbox seq and badge.
    static let columnCount = 11

    /// The target in the row's columns from `offset` on (``columns``, inbox seq, badge);
    /// nil when the device's id is null (the row of a push without a copy).
    init?(_ row: PostgresRandomAccessRow, at offset: Int) throws {
        guard let deviceID = try row[offset].decode(Int64?.self), let registrationID = try row[offset + 1].decode(String?.self) else {
            return nil
        }
        self.init(
            deviceID: deviceID,
            registrationID: registrationID,
            platform: try row[offset + 2].decode(String?.self).flatMap(Platform.init(rawValue:)) ?? .ios,
            apnsToken: try row[offset + 3].decode(String?.self),
            apnsEnvironment: try row[offset + 4].decode(String?.self).flatMap(APNsEnvironment.init(rawValue:)),
            voipToken: try row[offset + 5].decode(String?.self),
            tokenValid: try row[offset + 6].decode(Bool?.self) ?? false,
            inBackground: try row[offset + 7].decode(Bool?.self) ?? false,
            fcmToken: try row[offset + 8].decode(String?.self),
            inboxSeq: try row[offset + 9].decode(Int64?.self),
            badge: try row[offset + 10].decode(Int32?.self).map(Int.init)
        )
    }
}

/// A push job to fan out: the job, its message, and what its copies store in the inboxes
/// (nil for a message that is not stored: time to live 0).
public struct FanOutWork: Sendable {
    public var job: PushJob
    public var message: MessageRecord
    public var payload: DevicePayloads?

    public init(job: PushJob, message: MessageRecord, payload: DevicePayloads?) {
        self.job = job
        self.message = message
        self.payload = payload
    }
}
