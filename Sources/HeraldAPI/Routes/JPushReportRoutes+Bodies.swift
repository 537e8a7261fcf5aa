import Foundation
import HeraldCore
import HeraldStore

/// `GET /v3/received`: JPush's old received counts.
struct ReceivedEntry: Encodable {
    var breakdown: DeliveryBreakdown

    init(_ breakdown: DeliveryBreakdown) { self.breakdown = breakdown }

    enum CodingKeys: String, CodingKey {
        case msgID = "msg_id"
        case androidReceived = "android_received"
        case iosAPNsSent = "ios_apns_sent"
        case iosAPNsReceived = "ios_apns_received"
        case iosMsgReceived = "ios_msg_received"
        case wpMPNsSent = "wp_mpns_sent"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(breakdown.msgID, forKey: .msgID)
        try container.encode(breakdown.connection(.android).received, forKey: .androidReceived)
        try container.encode(breakdown.apns.sent, forKey: .iosAPNsSent)
        try container.encode(breakdown.apns.received, forKey: .iosAPNsReceived)
        try container.encode(breakdown.appleMessagesReceived, forKey: .iosMsgReceived)
        try container.encodeNil(forKey: .wpMPNsSent)
    }
}

/// `GET /v3/received/detail`: JPush's received counts by channel.
struct ReceivedDetailEntry: Encodable {
    var breakdown: DeliveryBreakdown

    init(_ breakdown: DeliveryBreakdown) { self.breakdown = breakdown }

    enum CodingKeys: String, CodingKey {
        case msgID = "msg_id"
        case jpushReceived = "jpush_received"
        case androidPNsSent = "android_pns_sent"
        case iosAPNsSent = "ios_apns_sent"
        case iosAPNsReceived = "ios_apns_received"
        case iosMsgReceived = "ios_msg_received"
        case wpMPNsSent = "wp_mpns_sent"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let connection = DeliveryBreakdown.Family.allCases.reduce(0) { $0 + breakdown.connection($1).received }
        try container.encode(breakdown.msgID, forKey: .msgID)
        try container.encode(connection, forKey: .jpushReceived)
        // Copies sent through Android's vendor channel (FCM); null when there were none, as
        // JPush has it for an app without one.
        if breakdown.fcmSent > 0 {
            try container.encode(breakdown.fcmSent, forKey: .androidPNsSent)
        } else {
            try container.encodeNil(forKey: .androidPNsSent)
        }
        try container.encode(breakdown.apns.sent, forKey: .iosAPNsSent)
        try container.encode(breakdown.apns.received, forKey: .iosAPNsReceived)
        try container.encode(breakdown.appleMessagesReceived, forKey: .iosMsgReceived)
        try container.encodeNil(forKey: .wpMPNsSent)
    }
}

extension DeliveryBreakdown {
    /// In-app messages Apple devices acknowledged: they travel only in the inbox copy, which
    /// a device reads over its connection whichever channel carried the notification.
    var appleMessagesReceived: Int { hasMessage ? connection(.apple).received + apns.received : 0 }
}

/// `GET /v3/messages/detail`: `{"msg_id", "details": {"notification": {...}, "message": {...}}}`,
/// each view with its totals and `sub_android.jg_android`, `sub_ios.jg_ios`, `sub_ios.apns`.
struct MessageDetailEntry: Encodable {
    /// One channel's (or one view's) numbers; `display` counts what devices' SDKs reported
    /// shown (HeraldKit's `displayed` receipts), `null` while none did (unknown, not 0).
    struct Stats: Encodable {
        var counts: DeliveryBreakdown.Counts
        /// Opens count in the notification view when there is one.
        var clicks: Bool

        enum CodingKeys: String, CodingKey { case target, sent, received, display, click }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(counts.target, forKey: .target)
            try container.encode(counts.sent, forKey: .sent)
            try container.encode(counts.received, forKey: .received)
            if counts.displayed > 0 {
                try container.encode(counts.displayed, forKey: .display)
            } else {
                try container.encodeNil(forKey: .display)
            }
            try container.encode(clicks ? counts.opened : 0, forKey: .click)
        }
    }

    struct View: Encodable {
        var total: Stats
        var android: Stats
        var ios: Stats
        /// Nil for in-app messages, which never go to APNs.
        var apns: Stats?

        enum CodingKeys: String, CodingKey {
            case target, sent, received, display, click
            case subAndroid = "sub_android"
            case subIOS = "sub_ios"
            case jgAndroid = "jg_android"
            case jgIOS = "jg_ios"
            case apns
        }

        func encode(to encoder: any Encoder) throws {
            try total.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            var subAndroid = container.nestedContainer(keyedBy: CodingKeys.self, forKey: .subAndroid)
            try subAndroid.encode(android, forKey: .jgAndroid)
            var subIOS = container.nestedContainer(keyedBy: CodingKeys.self, forKey: .subIOS)
            try subIOS.encode(ios, forKey: .jgIOS)
            try subIOS.encodeIfPresent(apns, forKey: .apns)
        }
    }

    var msgID: String
    var notification: View?
    var message: View?

    enum CodingKeys: String, CodingKey {
        case msgID = "msg_id"
        case details, notification, message
    }

    init(_ breakdown: DeliveryBreakdown) {
        msgID = breakdown.msgID
        let android = breakdown.connection(.android)
        let ios = breakdown.connection(.apple)
        if breakdown.hasNotification {
            notification = View(
                total: Stats(counts: breakdown.total, clicks: true),
                android: Stats(counts: android, clicks: true),
                ios: Stats(counts: ios, clicks: true),
                apns: Stats(counts: breakdown.apns, clicks: true)
            )
        }
        if breakdown.hasMessage {
            // The in-app message travels in the inbox copy only: a copy sent to APNs carried
            // the notification, and the message arrives once the device reads its inbox.
            var total = breakdown.total
            total.sent = total.received
            var apple = ios
            apple.target += breakdown.apns.target
            apple.received += breakdown.apns.received
            apple.sent = apple.received
            apple.opened += breakdown.apns.opened
            let clicks = !breakdown.hasNotification
            message = View(
                total: Stats(counts: total, clicks: clicks),
                android: Stats(counts: android, clicks: clicks),
                ios: Stats(counts: apple, clicks: clicks),
                apns: nil
            )
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(msgID, forKey: .msgID)
        var details = container.nestedContainer(keyedBy: CodingKeys.self, forKey: .details)
        try details.encodeIfPresent(notification, forKey: .notification)
        try details.encodeIfPresent(message, forKey: .message)
    }
}

/// `{"msg_id": "..." or a number, "registration_ids": [...], "date": "yyyy-mm-dd"}`.
struct JPushStatusRequest: Decodable {
    var msgID: String
    var registrationIDs: [String]
    var date: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case msgID = "msg_id"
        case registrationIDs = "registration_ids"
        case date
        /// JPush's PHP client's name for `date` (its getMessageStatus sends `data`).
        case data
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        // JPush's Java client sends the id as a number (its msg ids are longs), others as a
        // string; Herald's ids are decimal, so both name the same message.
        if let number = try? container.decode(Int64.self, forKey: .msgID) {
            msgID = String(number)
        } else {
            msgID = try container.decode(String.self, forKey: .msgID)
        }
        registrationIDs = try container.decode([String].self, forKey: .registrationIDs)
        date = try container.decodeIfPresent(String.self, forKey: .date) ?? container.decodeIfPresent(String.self, forKey: .data)
    }
}

/// `{"status": 0}`.
struct JPushStatusEntry: Encodable {
    var status: Int
}
