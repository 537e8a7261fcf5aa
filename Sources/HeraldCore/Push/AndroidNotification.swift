/// `notification.android`, JPush's fields for Android, kept as written: an Android device
/// gets them over its long connection (docs/protocol.md), its `alert` falling back to
/// `notification.alert`. Herald checks each field's kind and JPush's ranges.
public struct AndroidNotification: CheckedJSONObject {
    public let fields: [String: JSONValue]

    public init(fields: [String: JSONValue], at path: String = "notification.android") throws(HeraldError) {
        try Self.fieldKinds.check(fields, at: path)
        self.fields = fields
    }

    public static var knownFields: [String]? { Array(fieldKinds.kinds.keys) }

    /// The alert, if this part has its own.
    public var alert: String? { fields["alert"]?.string }

    /// JPush's fields of `notification.android`.
    static let fieldKinds = JSONFields([
        "alert": .string(),
        "title": .string(),
        "builder_id": .int(0...Int64(Int32.max)),
        "channel_id": .string(maxBytes: 1000),
        "category": .string(),
        "priority": .int(-2...2),
        "style": .int(0...3),
        "alert_type": .int(-1...7),
        "big_text": .string(),
        "inbox": .object,
        "big_pic_path": .string(),
        "extras": .object,
        "large_icon": .string(),
        "small_icon_uri": .string(),
        "icon_bg_color": .string(),
        "intent": .nested(JSONFields(["url": .string()])),
        "uri_activity": .string(),
        "uri_action": .string(),
        "badge_add_num": .int(1...99),
        "badge_set_num": .int(0...99),
        "badge_class": .string(),
        "sound": .string(),
        "show_begin_time": .string(),
        "show_end_time": .string(),
        "display_foreground": .oneOf(["0", "1"]),
    ])
}
