import Foundation
import Testing

@testable import HeraldCore

/// JPush's push bodies (`Tests/Fixtures/jpush/push/`) decode, read fast, store and validate
/// with JPush's meaning.
@Suite struct JPushBodyTests {
    /// The bodies, their placeholders filled in.
    static let bodies: [(name: String, json: String)] = {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/jpush/push")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().compactMap { name in
            guard let data = try? Data(contentsOf: directory.appendingPathComponent(name)),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let request = object["request"],
                let body = try? JSONSerialization.data(withJSONObject: request, options: [.sortedKeys, .withoutEscapingSlashes])
            else { return nil }
            let json = String(decoding: body, as: UTF8.self)
                .replacingOccurrences(of: "$IOS_RID", with: Identifiers.newRegistrationID())
                .replacingOccurrences(of: "$ANDROID_RID", with: Identifiers.newRegistrationID())
                .replacingOccurrences(of: "$MSG_ID", with: "1828256757")
            return (name, json)
        }
    }()

    /// Bodies the fast reader leaves to JSONDecoder: a fraction (`"volume": 1.0`, `0.5`),
    /// `null`, JPush's audience kinds Herald refuses, options it doesn't apply, what JSONDecoder
    /// refuses.
    static let readByJSONDecoder: Set<String> = [
        "10_critical_sound.json", "12_extras_any_json.json", "13_empty_audience_lists.json", "15_segment.json", "16_abtest.json",
        "20_options_not_applied.json", "22_callback_bad_type.json", "23_unknown_key.json", "27_java_client_ai_opportunity.json",
        "29_unknown_key_in_android.json", "30_new_field_in_android.json", "31_apns_production_string.json", "32_bare_platform.json",
    ]

    @Test func theFixturesAreThere() {
        #expect(Self.bodies.count >= 20)
    }

    @Test(arguments: bodies.map(\.name))
    func everyBodyIsReadFastAsJSONDecoderReadsItAndStoredAsItWasGiven(_ name: String) throws {
        let json = try #require(Self.bodies.first { $0.name == name }?.json)
        let bytes = Array(json.utf8)
        let fast = bytes.withUnsafeBytes(PushRequest.fastRead)
        // As the API reads a JPush body: keys Herald doesn't know are ignored (UnknownFields).
        let decoded = try? UnknownFields().jsonDecoder.decode(PushRequest.self, from: Data(bytes))
        if Self.readByJSONDecoder.contains(name) {
            #expect(fast == nil || fast == decoded)
        } else {
            #expect(fast != nil, "\(name) is not read fast")
            #expect(fast == decoded)
        }
        guard let decoded else { return }
        #expect(try JSONDecoder().decode(PushRequest.self, from: Data(decoded.storedJSON)) == decoded)
    }

    @Test func theQuickStartBodyIsReadFast() throws {
        let body = #"{"platform": "all", "audience": "all", "notification": {"alert": "Hi"}}"#
        let request = try #require(Array(body.utf8).withUnsafeBytes(PushRequest.fastRead))
        #expect(request.platform == .all)
        let push = try request.validated()
        #expect(push.audience == .everyone)
        #expect(push.warnings.isEmpty)
    }

    @Test func platformNamesNarrowTheAudienceToTheirDevices() throws {
        #expect(try push(#""platform": ["android"], "audience": "all""#).audience.platforms == ["android"])
        // JPush's ios is every platform APNs serves; Herald's own names stand for themselves.
        #expect(try push(#""platform": ["ios"], "audience": "all""#).audience.platforms == ["ios", "ipados", "macos", "tvos", "visionos", "watchos"])
        #expect(try push(#""platform": ["ipados", "hmos", "quickapp"], "audience": "all""#).audience.platforms == ["hmos", "ipados", "quickapp"])
        #expect(try push(#""platform": "all", "audience": "all""#).audience.platforms == nil)
        #expect(throws: HeraldError.invalidField("platform[1]", "expected one of \(PushPlatforms.names.joined(separator: ", "))")) {
            try push(#""platform": ["android", "blackberry"], "audience": "all""#)
        }
        #expect(throws: HeraldError.self) { try push(#""platform": [], "audience": "all""#) }
        // JPush's winphone names no device Herald serves: ignored, with a warning.
        let winphone = try push(#""platform": ["android", "winphone"], "audience": "all""#)
        #expect(winphone.audience.platforms == ["android"])
        #expect(winphone.warnings.map { $0.prefix { $0 != ":" } } == ["platform[1]"])
        // One platform bare, as JPush's schedule documentation writes it.
        #expect(try push(#""platform": "android", "audience": "all""#).audience.platforms == ["android"])
        #expect(throws: HeraldError.self) { try push(#""platform": "blackberry", "audience": "all""#) }
    }

    @Test func emptyAudienceListsAreNotSet() throws {
        let audience = try push(#""audience": {"registration_id": [], "alias": ["a"], "tag": [], "segment": []}"#).audience
        #expect(audience == ValidatedAudience(aliases: ["a"]))
        let error = #expect(throws: HeraldError.self) { try push(#""audience": {"alias": [], "tag_and": []}"#) }
        #expect(error?.code == .invalidField)
        #expect(error?.message.hasPrefix("audience: ") == true)
        for kind in [#""segment": ["s"]"#, #""abtest": ["a"]"#, #""file": {"file_id": "f"}"#] {
            let refused = #expect(throws: HeraldError.self) { try push(#""audience": {\#(kind), "tag": ["t"]}"#) }
            #expect(refused?.code == .invalidField)
            #expect(refused?.message.contains("not supported by Herald") == true)
        }
        let alone = #expect(throws: HeraldError.self) { try push(#""audience": {"live_activity_id": "l"}"#) }
        #expect(alone?.message.contains("only for a push with live_activity") == true)
    }

    @Test func aLiveActivityPushNarrowsTheAudienceToTheTokensItGoesTo() throws {
        let start = try push(
            #""audience": {"tag": ["t"]}, "live_activity": {"ios": {"event": "start", "attributes-type": "A", "attributes": {}, "content-state": {"x": 1}, "apns-priority": 5}}"#,
            notification: false
        )
        #expect(start.audience.liveActivity == .pushToStart(attributesType: "A"))
        #expect(start.audience.tags == ["t"])
        #expect(start.liveActivity?.priority == 5)
        #expect(start.path.fansOutExplicitly == false)
        // Apple's start carries an alert: one without is accepted, with a warning.
        #expect(start.warnings.contains { $0.hasPrefix("live_activity.ios.alert:") }, "\(start.warnings)")
        let alerted = try push(
            #""audience": {"tag": ["t"]}, "live_activity": {"ios": {"event": "start", "attributes-type": "A", "attributes": {}, "content-state": {"x": 1}, "alert": {"title": "T", "body": "B"}}}"#,
            notification: false
        )
        #expect(alerted.warnings.isEmpty, "\(alerted.warnings)")
        let update = try push(
            #""audience": {"live_activity_id": "order-1"}, "live_activity": {"ios": {"event": "update", "content-state": {"x": 2}}}"#,
            notification: false
        )
        #expect(update.audience.liveActivity == .activity(id: "order-1"))
        #expect(update.warnings.isEmpty)
        let rendered = PushRendering.liveActivityPayload(try #require(update.liveActivity), timestamp: 1_700_000_000, msgID: "m1")
        let payload = String(decoding: rendered, as: UTF8.self)
        #expect(payload == #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"x":2}},"herald":{"msg_id":"m1"}}"#)
    }

    /// A field set to `null` is refused by name, not read as absent (JPush's clients leave
    /// out what they don't set); `null` inside `extras` is a value like any other.
    @Test func aNullFieldIsRefusedByName() throws {
        let cases = [
            (#""platform": null"#, "platform"),
            (#""options": {"sendno": null}"#, "options.sendno"),
            (#""options": {"override_msg_id": null}"#, "options.override_msg_id"),
            (#""notification": {"alert": "a", "ios": {"sound": null}}"#, "notification.ios.sound"),
            (#""audience": {"tag": null, "alias": ["a"]}"#, "audience.tag"),
            (#""message": null"#, "message"),
        ]
        for (fields, field) in cases {
            let error = #expect(throws: HeraldError.self, "\(fields)") { try push(fields) }
            #expect(error?.code == .invalidField)
            #expect(error?.message == "\(field): must not be null (leave the field out)")
        }
        let extras = try push(#""notification": {"alert": "a", "ios": {"extras": {"k": null}}}"#)
        #expect(extras.notification != nil)
    }

    @Test func iosValuesAreTakenAsJPushWritesThem() throws {
        let ios = try #require(try push(#""notification": {"ios": {"badge": "5", "content-available": 1, "mutable-content": 0}}"#).notification?.ios)
        #expect(ios.badge == .set(5))
        #expect(ios.contentAvailable == true)
        #expect(ios.mutableContent == false)
        #expect(try push(#""notification": {"ios": {"alert": "a", "badge": ""}}"#).notification?.ios?.badge == .set(0))
        #expect(try push(#""notification": {"ios": {"alert": "a", "badge": "-3"}}"#).notification?.ios?.badge == .change(-3))
        for bad in [#""badge": "5a""#, #""badge": "+""#, #""content-available": 2"#, #""sound": {"critical": 2}"#, #""sound": {"volume": 1.5}"#] {
            #expect(throws: (any Error).self, "\(bad)") { try push(#""notification": {"ios": {"alert": "a", \#(bad)}}"#) }
        }
    }

    @Test func theAPNsPayloadCarriesLocalizationTheCriticalSoundAndExtrasOfAnyKind() throws {
        let push = try push(
            #"""
            "notification": {"ios": {"alert": {"loc-key": "GAME", "loc-args": ["Jenna", "Frank"], "title": "T"},
              "sound": {"critical": 1, "name": "alarm.caf", "volume": 0.5},
              "extras": {"news_id": 134, "ratio": 0.25, "on": true, "item": {"id": 7}, "list": [1, "two"], "none": null}}}
            """#
        )
        let payload = try Self.object(PushRendering.apnsPayload(push, msgID: "m1"))
        let aps = try #require(payload["aps"] as? [String: Any])
        let alert = try #require(aps["alert"] as? [String: Any])
        #expect(alert["loc-key"] as? String == "GAME")
        #expect(alert["loc-args"] as? [String] == ["Jenna", "Frank"])
        #expect(alert["title"] as? String == "T")
        let sound = try #require(aps["sound"] as? [String: Any])
        #expect(sound["critical"] as? Int == 1)
        #expect(sound["name"] as? String == "alarm.caf")
        #expect(sound["volume"] as? Double == 0.5)
        #expect(payload["news_id"] as? Int == 134)
        #expect(payload["ratio"] as? Double == 0.25)
        #expect(payload["on"] as? Bool == true)
        #expect((payload["item"] as? [String: Any])?["id"] as? Int == 7)
        #expect((payload["list"] as? [Any])?.count == 2)
        #expect(payload["none"] is NSNull)
    }

    @Test func androidDevicesGetTheAndroidPartAndOthersTheIOSOne() throws {
        let push = try push(
            #"""
            "notification": {"alert": "common", "android": {"title": "A", "builder_id": 3, "extras": {"news_id": 134}},
              "ios": {"alert": {"title": "I", "body": "iOS body"}, "extras": {"k": "v"}}}
            """#
        )
        let payloads = PushRendering.devicePayloads(push, msgID: "m1")
        let android = try #require(try Self.object(payloads.payload(for: .android))["notification"] as? [String: Any])
        #expect(android["alert"] as? String == "common")
        #expect(android["title"] as? String == "A")
        #expect(android["builder_id"] as? Int == 3)
        #expect((android["extras"] as? [String: Any])?["news_id"] as? Int == 134)
        for platform in [Platform.ios, .linux, .hmos] {
            let other = try #require(try Self.object(payloads.payload(for: platform))["notification"] as? [String: Any])
            #expect(other["alert"] as? String == "iOS body")
            #expect(other["title"] as? String == "I")
            #expect(other["builder_id"] == nil)
        }
        // An alert alone renders once for every platform.
        #expect(PushRendering.devicePayloads(try self.push(#""notification": {"alert": "hi"}"#), msgID: "m").android == nil)
        // A device whose platform's part and alert are both missing gets the other rendering:
        // once for every platform.
        let iosOnly = PushRendering.devicePayloads(try self.push(#""notification": {"ios": {"alert": "i", "badge": 2}}"#), msgID: "m")
        #expect(iosOnly.android == nil)
        let iosOnAndroid = try #require(try Self.object(iosOnly.payload(for: .android))["notification"] as? [String: Any])
        #expect(iosOnAndroid["alert"] as? String == "i")
        #expect(iosOnAndroid["badge"] as? Int == 2)
        let androidOnly = PushRendering.devicePayloads(try self.push(#""notification": {"android": {"alert": "a", "title": "t"}}"#), msgID: "m")
        #expect(androidOnly.android == nil)
        let androidOnIOS = try #require(try Self.object(androidOnly.payload(for: .ios))["notification"] as? [String: Any])
        #expect(androidOnIOS["alert"] as? String == "a")
        #expect(androidOnIOS["title"] as? String == "t")
    }

    @Test func voipGoesToTheVoIPTokenBesideTheNotificationOrAlone() throws {
        let both = try push(#""notification": {"alert": "Call", "voip": {"caller": "Ann", "n": 1}}"#)
        #expect(both.pushType == .alert)
        #expect(both.hasVoIPCompanion)
        let voip = try Self.object(PushRendering.voipPayload(both, msgID: "m1"))
        #expect(voip["caller"] as? String == "Ann")
        #expect(voip["n"] as? Int == 1)
        #expect((voip["herald"] as? [String: String])?["msg_id"] == "m1")
        let alone = try push(#""notification": {"voip": {"caller": "Ann"}}"#)
        #expect(alone.pushType == .voip)
        #expect(!alone.hasVoIPCompanion)
        #expect(try Self.object(PushRendering.apnsPayload(alone, msgID: "m2"))["aps"] == nil)
        #expect(throws: HeraldError.self) { try push(#""notification": {"ios": {"alert": "a", "push_type": "voip"}, "voip": {}}"#) }
        let large = String(repeating: "v", count: 5200)
        let error = #expect(throws: HeraldError.self) { try push(#""notification": {"alert": "a", "voip": {"k": "\#(large)"}}"#) }
        #expect(error?.code == .payloadTooLarge)
        #expect(error?.message.hasPrefix("notification.voip: ") == true)
    }

    @Test func optionsAreReadWithJPushsMeaning() throws {
        let collapsing = try push(#""notification": {"alert": "a"}, "options": {"apns_collapse_id": "c1", "sendno": 18}"#)
        #expect(collapsing.identifier == "c1")
        #expect(collapsing.apnsCollapseID == nil)
        #expect(collapsing.sendno == 18)
        #expect(collapsing.warnings.isEmpty)
        // Beside override_msg_id, apns_collapse_id is the APNs collapse id alone.
        let request = try Self.request(#""notification": {"alert": "a"}, "options": {"apns_collapse_id": "c1", "override_msg_id": 1828256757}"#)
        let unresolved = try request.validated()
        #expect(unresolved.overrideMsgID == "1828256757")
        #expect(unresolved.replace == nil)
        let (overriding, resolved) = try request.overriding(identifier: "earlier")
        #expect(resolved.replace == "earlier")
        #expect(resolved.identifier(msgID: "m") == "earlier")
        #expect(resolved.collapseID(identifier: "earlier") == "c1")
        // The stored request carries the replace, for the center.
        #expect(try JSONDecoder().decode(PushRequest.self, from: Data(overriding.storedJSON)).validated() == resolved)
        let warned = try push(
            #""notification": {"alert": "a"}, "options": {"big_push_duration": 10, "classification": 1, "third_party_channel": {"oppo": {}}, "test_model": true}"#
        )
        #expect(
            warned.warnings.map { String($0.prefix { $0 != ":" }) } == [
                "options.third_party_channel", "options.test_model",
            ]
        )
        // big_push_duration is applied: the push is spread, its path batch by batch.
        #expect(warned.spreadMinutes == 10)
        #expect(warned.classification == 1)
        #expect(warned.path.isSpread && !warned.path.fansOutExplicitly)
        #expect(try push(#""notification": {"alert": "a"}, "options": {"big_push_duration": 0}"#).spreadMinutes == nil)
        for bad in [#""big_push_duration": 1401"#, #""classification": 2"#, #""apns_collapse_id": """#, #""test_model": "yes""#, #""sendno": "18""#] {
            #expect(throws: (any Error).self, "\(bad)") { try push(#""notification": {"alert": "a"}, "options": {\#(bad)}"#) }
        }
    }

    @Test func theFieldsHeraldStoresAreCheckedForShape() throws {
        let stored = try push(
            #"""
            "notification": {"alert": "a", "hmos": {"alert": "h"}, "quickapp": {"page": "/p"}},
            "callback": {"url": "https://example.com/cb", "params": {"id": 1}, "type": 11},
            "sms_message": {"delay_time": 3600, "temp_id": 1250, "temp_para": {"code": "1"}},
            "inapp_message": {"inapp_message": true}
            """#
        )
        #expect(
            stored.warnings.map { String($0.prefix { $0 != ":" }) } == [
                "notification.hmos", "notification.quickapp", "inapp_message",
            ]
        )
        #expect(stored.sms == SMSFallback(delay: 3600, content: nil, templateID: 1250, params: ["code": "1"], signID: nil))
        // The callback is applied: it is on the push, with its type and params.
        #expect(stored.callback?.url == "https://example.com/cb")
        #expect(stored.callback?.type == 11)
        for bad in [
            #""callback": {"url": "ftp://x", "type": 1}"#, #""callback": {"type": 4}"#, #""callback": {"type": 1}"#,
            #""callback": {"url": "https:///path", "type": 1}"#, #""sms_message": {"temp_id": 1}"#,
            #""sms_message": {"delay_time": 0}"#,
            #""sms_message": {"delay_time": 0, "content": "a", "temp_id": 1}"#, #""sms_message": {"delay_time": 0, "content": ""}"#,
            #""sms_message": {"delay_time": 90000, "temp_id": 1}"#, #""live_activity": {"ios": {"event": "start", "content-state": {}}}"#,
            #""notification": {"android": {"alert": "a", "priority": 3}}"#, #""notification": {"android": {"alert": "a", "titel": "t"}}"#,
            #""notification": {}"#,
        ] {
            #expect(throws: (any Error).self, "\(bad)") { try Self.request(bad).validated() }
        }
    }

    /// A notification with only parts for channels Herald doesn't have is accepted, as JPush
    /// accepts it, and reaches no device: its audience matches none.
    @Test func aNotificationOnlyForChannelsHeraldLacksIsStoredForNoDevice() throws {
        let stored = try push(#""notification": {"hmos": {"alert": "h"}, "winphone": {"alert": "w"}}"#)
        #expect(stored.deliversNothing && stored.notification == nil)
        #expect(stored.audience.platforms == [])
        #expect(stored.warnings.map { $0.prefix { $0 != ":" } } == ["notification"])
        #expect(!stored.path.fansOutExplicitly)
        // Beside a message, the message is delivered as usual.
        let withMessage = try push(#""notification": {"hmos": {"alert": "h"}}, "message": {"msg_content": "m"}"#)
        #expect(!withMessage.deliversNothing && withMessage.audience.platforms == nil)
    }

    /// `notification`: false leaves the request without the default notification.
    private func push(_ fields: String, notification: Bool = true) throws -> Push {
        try Self.request(fields, notification: notification).validated()
    }

    private static func request(_ fields: String, notification: Bool = true) throws -> PushRequest {
        var body = "{\(fields)"
        if !fields.contains(#""audience""#) { body += #", "audience": "all""# }
        if notification, !fields.contains(#""notification""#) { body += #", "notification": {"alert": "a"}"# }
        return try JSONDecoder().decode(PushRequest.self, from: Data((body + "}").utf8))
    }

    private static func object(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }
}
