import HeraldCore

/// What became of one message's copies, by the family of their devices' platforms and the
/// channel that carried them: the numbers JPush's report views (`/v3/received`,
/// `/v3/messages/detail`) are made of.
///
/// Each copy counts in one channel: APNs once Herald tried to send it there (accepted,
/// refused, or due for a retry), else the long connection, which holds it in the device's
/// inbox until it is acknowledged.
public struct DeliveryBreakdown: Sendable, Hashable {
    /// Which platforms JPush reports apart.
    public enum Family: Sendable, Hashable, CaseIterable {
        case android
        /// iOS and Apple's other platforms.
        case apple
        /// Linux, Windows, the web: in totals only.
        case other

        init(_ platform: String?) {
            switch platform.flatMap(Platform.init(rawValue:)) {
            case .android: self = .android
            case .some(let platform) where platform.usesAPNs: self = .apple
            default: self = .other
            }
        }
    }

    /// Copies of one channel.
    public struct Counts: Sendable, Hashable {
        /// Copies the channel had to carry.
        public var target = 0
        /// Copies the channel took: acknowledged by the device over its connection, or
        /// accepted by APNs.
        public var sent = 0
        /// Copies the device acknowledged over its connection (an APNs copy too, once the
        /// device has read it from its inbox).
        public var received = 0
        /// Copies the device reported opened or clicked.
        public var opened = 0
        /// Copies the device's SDK reported shown (a `displayed` receipt).
        public var displayed = 0

        public init(target: Int = 0, sent: Int = 0, received: Int = 0, opened: Int = 0, displayed: Int = 0) {
            self.target = target
            self.sent = sent
            self.received = received
            self.opened = opened
            self.displayed = displayed
        }

        static func + (lhs: Counts, rhs: Counts) -> Counts {
            Counts(
                target: lhs.target + rhs.target,
                sent: lhs.sent + rhs.sent,
                received: lhs.received + rhs.received,
                opened: lhs.opened + rhs.opened,
                displayed: lhs.displayed + rhs.displayed
            )
        }
    }

    public var msgID: String
    /// The push has a notification (JPush's "notification" view).
    public var hasNotification: Bool
    /// The push has an in-app message (JPush's "message" view, custom messages).
    public var hasMessage: Bool
    /// Copies carried by the long connection, by family.
    public var connection: [Family: Counts] = [:]
    /// Copies Herald sent to APNs (Apple devices only).
    public var apns = Counts()
    /// Copies FCM took (Android devices not connected): JPush's `android_pns_sent`. They
    /// count with the connection's too, where the device acknowledges them when it reads
    /// its inbox.
    public var fcmSent = 0

    public init(msgID: String, hasNotification: Bool, hasMessage: Bool) {
        self.msgID = msgID
        self.hasNotification = hasNotification
        self.hasMessage = hasMessage
    }

    /// The long connection's copies of one family.
    public func connection(_ family: Family) -> Counts { connection[family] ?? Counts() }

    /// Every copy, whatever carried it.
    public var total: Counts { connection.values.reduce(apns, +) }
}
