/// How a push is sent: JPush's options, and Herald's own (`identifier`, `replace`,
/// `priority`).
public struct PushOptions: Sendable, Hashable, Codable {
    /// Echoed back in the answer, as JPush does.
    public var sendno: Int64?
    /// Seconds a copy may wait for its device: default one day, at most ten; zero means
    /// online devices only.
    public var timeToLive: Int?
    /// The notification's identifier on the device and its apns-collapse-id.
    public var identifier: String?
    /// The identifier of an earlier notification this one replaces.
    public var replace: String?
    /// Send to APNs production (true) or sandbox (false); by default each device's own.
    public var apnsProduction: Bool?
    /// APNs priority: 10 (immediate), 5 (power-considerate) or 1.
    public var priority: Int?
    /// JPush's name for the APNs collapse id: Herald's ``identifier``.
    public var apnsCollapseID: String?
    /// The msg_id of an earlier push this one replaces (JPush's override): the API turns it
    /// into ``replace``, that push's identifier. A number or a string.
    public var overrideMsgID: String?
    /// Minutes to spread the push over: accepted, not applied yet.
    public var bigPushDuration: Int?
    /// 0 operations, 1 system (for Android vendor channels): accepted, not applied yet.
    public var classification: Int?
    /// Android vendor channels' settings: accepted, not applied yet.
    public var thirdPartyChannel: FreeJSONObject?
    /// JPush's other options (``unappliedKinds``), as given: accepted, not applied.
    public var unapplied: [String: JSONValue]

    public init(
        timeToLive: Int? = nil,
        identifier: String? = nil,
        replace: String? = nil,
        apnsProduction: Bool? = nil,
        priority: Int? = nil
    ) {
        self.timeToLive = timeToLive
        self.identifier = identifier
        self.replace = replace
        self.apnsProduction = apnsProduction
        self.priority = priority
        self.unapplied = [:]
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case sendno
        case timeToLive = "time_to_live"
        case identifier, replace
        case apnsProduction = "apns_production"
        case priority
        case apnsCollapseID = "apns_collapse_id"
        case overrideMsgID = "override_msg_id"
        case bigPushDuration = "big_push_duration"
        case classification
        case thirdPartyChannel = "third_party_channel"
        case targetEvent = "target_event"
        case testMessage = "test_message"
        case receiptID = "receipt_id"
        case activePush = "active_push"
        case needBackup = "need_backup"
        case businessOperationCode = "business_operation_code"
        case notification3rdVer = "notification_3rd_ver"
        case testModel = "test_model"
        case multiLanguage = "multi_language"
    }

    /// JPush's options Herald reads without applying them, and what each holds.
    static let unappliedKinds = JSONFields([
        "target_event": .strings,
        "test_message": .bool,
        "receipt_id": .string(),
        "active_push": .bool,
        "need_backup": .bool,
        "business_operation_code": .string(),
        "notification_3rd_ver": .string(),
        "test_model": .bool,
        "multi_language": .object,
    ])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        sendno = try container.decodeIfGiven(Int64.self, forKey: .sendno)
        timeToLive = try container.decodeIfGiven(Int.self, forKey: .timeToLive)
        identifier = try container.decodeIfGiven(String.self, forKey: .identifier)
        replace = try container.decodeIfGiven(String.self, forKey: .replace)
        apnsProduction = try container.decodeIfGiven(BoolText.self, forKey: .apnsProduction)?.value
        priority = try container.decodeIfGiven(Int.self, forKey: .priority)
        apnsCollapseID = try container.decodeIfGiven(String.self, forKey: .apnsCollapseID)
        overrideMsgID = try container.decodeIfGiven(MessageIDText.self, forKey: .overrideMsgID)?.text
        bigPushDuration = try container.decodeIfGiven(Int.self, forKey: .bigPushDuration)
        classification = try container.decodeIfGiven(Int.self, forKey: .classification)
        thirdPartyChannel = try container.decodeIfGiven(FreeJSONObject.self, forKey: .thirdPartyChannel)
        var unapplied: [String: JSONValue] = [:]
        for key in Self.CodingKeys.allCases where Self.unappliedKinds.kinds[key.stringValue] != nil && container.contains(key) {
            unapplied[key.stringValue] = try container.decode(JSONValue.self, forKey: key)
        }
        try Self.unappliedKinds.check(unapplied, at: decoder.fieldName)
        self.unapplied = unapplied
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        func put<Value: Encodable>(_ value: Value?, _ key: CodingKeys) throws {
            try container.encodeIfPresent(value, forKey: AnyCodingKey(key))
        }
        try put(sendno, .sendno)
        try put(timeToLive, .timeToLive)
        try put(identifier, .identifier)
        try put(replace, .replace)
        try put(apnsProduction, .apnsProduction)
        try put(priority, .priority)
        try put(apnsCollapseID, .apnsCollapseID)
        try put(overrideMsgID, .overrideMsgID)
        try put(bigPushDuration, .bigPushDuration)
        try put(classification, .classification)
        try put(thirdPartyChannel, .thirdPartyChannel)
        for (key, value) in unapplied { try container.encode(value, forKey: AnyCodingKey(stringValue: key)) }
    }

    /// A boolean, or the string `"true"` or `"false"` (JPush's schedule documentation writes
    /// `"apns_production": "false"`, and JPush takes it).
    struct BoolText: Decodable {
        var value: Bool

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                value = flag
            } else if let text = try? container.decode(String.self), text == "true" || text == "false" {
                value = text == "true"
            } else {
                throw HeraldError.invalidField(decoder.fieldName, "expected true or false")
            }
        }
    }

    /// A msg_id as JPush's clients send it, a number, or as a string.
    struct MessageIDText: Decodable {
        var text: String

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int64.self) {
                text = String(number)
            } else if let string = try? container.decode(String.self) {
                text = string
            } else {
                throw HeraldError.invalidField(decoder.fieldName, "expected a msg_id (a number or a string)")
            }
        }
    }
}
