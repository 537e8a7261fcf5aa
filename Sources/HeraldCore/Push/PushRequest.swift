/// The body of `POST /v3/push` and `POST /v3/push/validate`: JPush's v3 push object.
///
/// Decoding is strict: a key JPush's push object doesn't have is an error. ``validated()``
/// checks values and limits and gives the ``Push`` the center sends, with the warnings the
/// answer carries for what Herald accepts without applying. The API reads the usual bodies
/// with ``fastRead(_:)`` first; the message stores ``storedJSON``, which decodes back to the
/// same request.
public struct PushRequest: Sendable, Hashable, Codable {
    /// `"all"` or a list of platforms; absent means all.
    public var platform: PushPlatforms?
    public var audience: PushAudience
    public var notification: PushNotification?
    /// JPush's custom message: delivered over the long connection only.
    public var message: InAppMessage?
    /// JPush's in-app message switch (`{"inapp_message": true}`): accepted, not applied.
    public var inappMessage: FreeJSONObject?
    /// JPush's custom message turned vendor notification: accepted, not applied.
    public var notification3rd: FreeJSONObject?
    public var smsMessage: SMSMessage?
    public var liveActivity: LiveActivity?
    public var callback: PushCallback?
    public var options: PushOptions?
    public var cid: String?

    public init(
        platform: PushPlatforms? = nil,
        audience: PushAudience,
        notification: PushNotification? = nil,
        message: InAppMessage? = nil,
        options: PushOptions? = nil,
        cid: String? = nil
    ) {
        self.platform = platform
        self.audience = audience
        self.notification = notification
        self.message = message
        self.options = options
        self.cid = cid
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case platform, audience, notification, message
        case inappMessage = "inapp_message"
        case notification3rd = "notification_3rd"
        case smsMessage = "sms_message"
        case liveActivity = "live_activity"
        case callback, options, cid
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        platform = try container.decodeIfGiven(PushPlatforms.self, forKey: .platform)
        audience = try container.decode(PushAudience.self, forKey: .audience)
        notification = try container.decodeIfGiven(PushNotification.self, forKey: .notification)
        // JPush's documented schedule bodies carry `"message": {}` beside a notification:
        // an empty message is no message.
        if container.contains(.message), (try? container.decode([String: JSONValue].self, forKey: .message))?.isEmpty == true {
            message = nil
        } else {
            message = try container.decodeIfGiven(InAppMessage.self, forKey: .message)
        }
        inappMessage = try container.decodeIfGiven(FreeJSONObject.self, forKey: .inappMessage)
        notification3rd = try container.decodeIfGiven(FreeJSONObject.self, forKey: .notification3rd)
        smsMessage = try container.decodeIfGiven(SMSMessage.self, forKey: .smsMessage)
        liveActivity = try container.decodeIfGiven(LiveActivity.self, forKey: .liveActivity)
        callback = try container.decodeIfGiven(PushCallback.self, forKey: .callback)
        options = try container.decodeIfGiven(PushOptions.self, forKey: .options)
        cid = try container.decodeIfGiven(String.self, forKey: .cid)
    }
}

/// `platform`: `"all"`, or the platforms whose devices the push is for, as named in the
/// request (``PushRequest/validated()`` checks the names).
public enum PushPlatforms: Sendable, Hashable, Codable {
    case all
    case list([String])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let names = try? container.decode([String].self) {
            self = .list(names)
        } else if let name = try? container.decode(String.self) {
            // JPush takes one platform bare (`"platform": "android"`), as its schedule
            // documentation writes it.
            self = name == "all" ? .all : .list([name])
        } else {
            throw HeraldError.invalidField(decoder.fieldName, "expected \"all\" or a list of platforms")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .all: try container.encode("all")
        case .list(let names): try container.encode(names)
        }
    }

    /// The devices' platforms a name stands for: JPush's `ios` is every platform APNs
    /// serves; Herald's own names stand for themselves.
    static func platforms(named name: String) -> [Platform]? {
        Platform.named(jpush: name)
    }

    /// The names a list may hold.
    static let names =
        ["android", "ios", "hmos", "quickapp"] + Platform.allCases.map(\.rawValue).filter { !["android", "ios", "hmos", "quickapp"].contains($0) }
}
