import HeraldStore

/// `GET /v3/messages`: JPush's older per-platform message statistics (its "VIP" report,
/// which JPush's official clients still call: `get_messages` in the Python one), made of
/// the same numbers as `/v3/messages/detail`.
///
/// - `android`: `target`, `online_push` (copies the long connection delivered),
///   `received`, `click` (notification opens) and `msg_click` (opens of a push that is an
///   in-app message only).
/// - `ios`: `apns_target`, `apns_sent`, `apns_received` (copies sent to APNs, and of those
///   the ones the device read from its inbox), `click` (notification opens, whatever
///   carried the copy), and `target` and `received` of the in-app message. JPush's view has
///   no place for Apple notifications delivered over the long connection: they are in
///   `/v3/messages/detail` (`sub_ios.jg_ios`).
/// - `winphone`: all `null` (no such channel).
struct MessagesEntry: Encodable {
    var breakdown: DeliveryBreakdown

    init(_ breakdown: DeliveryBreakdown) { self.breakdown = breakdown }

    enum CodingKeys: String, CodingKey {
        case msgID = "msg_id"
        case android, ios, winphone
        case target, received, click
        case onlinePush = "online_push"
        case msgClick = "msg_click"
        case apnsTarget = "apns_target"
        case apnsSent = "apns_sent"
        case apnsReceived = "apns_received"
        case mpnsTarget = "mpns_target"
        case mpnsSent = "mpns_sent"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(breakdown.msgID, forKey: .msgID)
        let notification = breakdown.hasNotification

        let android = breakdown.connection(.android)
        var androidStats = container.nestedContainer(keyedBy: CodingKeys.self, forKey: .android)
        try androidStats.encode(android.target, forKey: .target)
        try androidStats.encode(android.sent, forKey: .onlinePush)
        try androidStats.encode(android.received, forKey: .received)
        try androidStats.encode(notification ? android.opened : 0, forKey: .click)
        try androidStats.encode(notification ? 0 : android.opened, forKey: .msgClick)

        let apple = breakdown.connection(.apple)
        let apns = breakdown.apns
        var iosStats = container.nestedContainer(keyedBy: CodingKeys.self, forKey: .ios)
        try iosStats.encode(apns.target, forKey: .apnsTarget)
        try iosStats.encode(apns.sent, forKey: .apnsSent)
        try iosStats.encode(apns.received, forKey: .apnsReceived)
        try iosStats.encode(notification ? apple.opened + apns.opened : 0, forKey: .click)
        // The in-app message travels in the inbox copy, whichever channel carried the
        // notification: every Apple copy is its target.
        try iosStats.encode(breakdown.hasMessage ? apple.target + apns.target : 0, forKey: .target)
        try iosStats.encode(breakdown.appleMessagesReceived, forKey: .received)

        var winphone = container.nestedContainer(keyedBy: CodingKeys.self, forKey: .winphone)
        try winphone.encodeNil(forKey: .mpnsTarget)
        try winphone.encodeNil(forKey: .mpnsSent)
        try winphone.encodeNil(forKey: .click)
    }
}
