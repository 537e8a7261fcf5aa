/// A notification: a common `alert` and each platform's part. An Apple device gets the iOS
/// rendering, an Android device the Android one, each falling back to `alert`.
public struct PushNotification: Sendable, Hashable, Codable {
    public var alert: String?
    public var ios: IOSNotification?
    public var android: AndroidNotification?
    /// Any object, delivered to the device's VoIP token (beside the iOS notification, if
    /// the push has one).
    public var voip: FreeJSONObject?
    /// Accepted and stored; Herald has no HarmonyOS channel.
    public var hmos: FreeJSONObject?
    /// Accepted and stored; Herald has no quick app channel.
    public var quickapp: FreeJSONObject?
    /// JPush's Windows Phone part, still in its documentation and sent by its PHP and Go
    /// clients: accepted and stored; Herald has no Windows Phone channel.
    public var winphone: FreeJSONObject?

    public init(alert: String? = nil, ios: IOSNotification? = nil, android: AndroidNotification? = nil, voip: FreeJSONObject? = nil) {
        self.alert = alert
        self.ios = ios
        self.android = android
        self.voip = voip
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case alert, ios, android, voip, hmos, quickapp, winphone }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        alert = try container.decodeIfGiven(String.self, forKey: .alert)
        ios = try container.decodeIfGiven(IOSNotification.self, forKey: .ios)
        android = try container.decodeIfGiven(AndroidNotification.self, forKey: .android)
        voip = try container.decodeIfGiven(FreeJSONObject.self, forKey: .voip)
        hmos = try container.decodeIfGiven(FreeJSONObject.self, forKey: .hmos)
        quickapp = try container.decodeIfGiven(FreeJSONObject.self, forKey: .quickapp)
        winphone = try container.decodeIfGiven(FreeJSONObject.self, forKey: .winphone)
    }

    /// Whether Apple devices have something of this notification to get from APNs: an
    /// alert, an iOS part, or a VoIP payload.
    public var reachesApple: Bool { alert != nil || ios != nil || voip != nil }

    /// Whether a device gets the Android rendering: an Android device when the notification
    /// has something for Android (its part, or `alert`), another device when it has nothing
    /// else (no `alert`, iOS part or VoIP payload). A device whose platform's rendering would
    /// be empty gets the other one, as every device got the iOS rendering before Herald
    /// took JPush's parts: a push with only an iOS part still shows on Android.
    func rendersAndroidPart(android: Bool) -> Bool {
        let forAndroid = alert != nil || self.android != nil
        let forOthers = alert != nil || ios != nil || voip != nil
        return android ? forAndroid || !forOthers : !forOthers && forAndroid
    }
}

/// JPush's custom message (`message`): delivered over the MQTT connection only, never shown
/// by the system.
public struct InAppMessage: Sendable, Hashable, Codable {
    public var msgContent: String
    public var title: String?
    public var contentType: String?
    /// Any JSON values.
    public var extras: [String: JSONValue]?

    public init(msgContent: String, title: String? = nil, contentType: String? = nil, extras: [String: JSONValue]? = nil) {
        self.msgContent = msgContent
        self.title = title
        self.contentType = contentType
        self.extras = extras
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case msgContent = "msg_content"
        case title
        case contentType = "content_type"
        case extras
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        msgContent = try container.decode(String.self, forKey: .msgContent)
        title = try container.decodeIfGiven(String.self, forKey: .title)
        contentType = try container.decodeIfGiven(String.self, forKey: .contentType)
        extras = try container.decodeIfGiven([String: JSONValue].self, forKey: .extras)
    }
}
