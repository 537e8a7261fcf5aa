/// The answers of the push, recall and report routes. Missing counts read as 0, so a
/// server that reports fewer of them still works.

/// `POST /v3/push` → 200.
struct PushAccepted: Decodable {
    var messageID: String
    var cid: String?
    /// What Herald accepted without acting on it (an Android vendor channel, for one).
    var warnings: [String]

    enum CodingKeys: String, CodingKey {
        case cid, warnings
        case messageID = "msg_id"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        messageID = try container.decode(String.self, forKey: .messageID)
        cid = try container.decodeIfPresent(String.self, forKey: .cid)
        warnings = try container.decodeIfPresent([String].self, forKey: .warnings) ?? []
    }
}

/// `POST /v3/push/validate` → 200.
struct AudienceSize: Decodable {
    var audienceSize: Int

    enum CodingKeys: String, CodingKey { case audienceSize = "audience_size" }
}

/// `DELETE /v3/push/{msg_id}` and `POST /v3/push/recall` → 200.
struct Recalled: Decodable {
    var recalled: [String]
}

/// `GET /v3/report/received?msg_ids=...` → 200.
struct ReceivedReports: Decodable {
    var reports: [ReceivedReport]
}

/// How far delivery of one message has got.
struct ReceivedReport: Decodable, Equatable {
    var messageID: String
    var targeted = 0
    /// Copies not routed yet.
    var pending = 0
    var deliveredTCP = 0
    var sentAPNs = 0
    /// Copies FCM took.
    var sentFCM = 0
    var failedAPNs = 0
    /// Failed copies by APNs reason.
    var apnsFailures: [String: Int] = [:]
    /// Copies stored for a device that is offline.
    var waiting = 0
    var opened = 0
    var recalled = 0
    var replaced = 0
    var expired = 0
    /// Routing is over: nothing pending, no retry scheduled.
    var done = false

    enum CodingKeys: String, CodingKey {
        case targeted, pending, waiting, opened, recalled, replaced, expired, done
        case messageID = "msg_id"
        case deliveredTCP = "tcp_delivered"
        case sentAPNs = "apns_sent"
        case sentFCM = "fcm_sent"
        case failedAPNs = "apns_failed"
        case apnsFailures = "apns_failures"
    }

    /// One APNs failure reason and its count, as the server lists them.
    private struct Failure: Decodable {
        var reason: String
        var count: Int
    }

    init(messageID: String) { self.messageID = messageID }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func count(_ key: CodingKeys) throws -> Int { try container.decodeIfPresent(Int.self, forKey: key) ?? 0 }
        messageID = try container.decode(String.self, forKey: .messageID)
        targeted = try count(.targeted)
        pending = try count(.pending)
        deliveredTCP = try count(.deliveredTCP)
        sentAPNs = try count(.sentAPNs)
        sentFCM = try count(.sentFCM)
        failedAPNs = try count(.failedAPNs)
        waiting = try count(.waiting)
        opened = try count(.opened)
        recalled = try count(.recalled)
        replaced = try count(.replaced)
        expired = try count(.expired)
        done = try container.decodeIfPresent(Bool.self, forKey: .done) ?? false
        // `[{"reason": "BadDeviceToken", "count": 3}]`, or `{"BadDeviceToken": 3}`.
        if let list = try? container.decodeIfPresent([Failure].self, forKey: .apnsFailures) {
            apnsFailures = Dictionary(list.map { ($0.reason, $0.count) }, uniquingKeysWith: +)
        } else {
            apnsFailures = try container.decodeIfPresent([String: Int].self, forKey: .apnsFailures) ?? [:]
        }
    }

    /// Copies that reached an end: delivered, handed to APNs or FCM, failed, expired, recalled or replaced.
    var settled: Int { deliveredTCP + sentAPNs + sentFCM + failedAPNs + expired + recalled + replaced }

    /// `BadDeviceToken 3, Unregistered 1`, most frequent first.
    var failureSummary: String {
        apnsFailures.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }
}

/// `POST /v3/report/status/message` → 200.
struct MessageStatuses: Decodable {
    struct Status: Decodable {
        var status: String
        var apnsReason: String?
        var opened: Bool?

        enum CodingKeys: String, CodingKey {
            case status, opened
            case apnsReason = "apns_reason"
        }
    }

    var messageID: String
    var statuses: [String: Status]

    enum CodingKeys: String, CodingKey {
        case statuses
        case messageID = "msg_id"
    }
}

/// `GET /v3/received/detail` → 200: one per message. Missing or null counts read as nil.
struct JPushReceived: Decodable {
    var messageID: String
    var jpushReceived: Int?
    var apnsSent: Int?
    var apnsReceived: Int?
    var messagesReceived: Int?

    enum CodingKeys: String, CodingKey {
        case messageID = "msg_id"
        case jpushReceived = "jpush_received"
        case apnsSent = "ios_apns_sent"
        case apnsReceived = "ios_apns_received"
        case messagesReceived = "ios_msg_received"
    }
}

/// `GET /v3/messages/detail` → 200: one per message, with a view per kind of content.
struct JPushMessageDetail: Decodable {
    struct Counts: Decodable {
        var target: Int?
        var sent: Int?
        var received: Int?
        var click: Int?
    }

    struct View: Decodable {
        struct Android: Decodable {
            var jgAndroid: Counts?
            enum CodingKeys: String, CodingKey { case jgAndroid = "jg_android" }
        }

        struct IOS: Decodable {
            var jgIOS: Counts?
            var apns: Counts?
            enum CodingKeys: String, CodingKey {
                case jgIOS = "jg_ios"
                case apns
            }
        }

        var counts: Counts
        var subAndroid: Android?
        var subIOS: IOS?

        enum CodingKeys: String, CodingKey {
            case subAndroid = "sub_android"
            case subIOS = "sub_ios"
        }

        init(from decoder: any Decoder) throws {
            counts = try Counts(from: decoder)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            subAndroid = try container.decodeIfPresent(Android.self, forKey: .subAndroid)
            subIOS = try container.decodeIfPresent(IOS.self, forKey: .subIOS)
        }
    }

    struct Details: Decodable {
        var notification: View?
        var message: View?
    }

    var messageID: String
    var details: Details

    enum CodingKeys: String, CodingKey {
        case messageID = "msg_id"
        case details
    }
}
