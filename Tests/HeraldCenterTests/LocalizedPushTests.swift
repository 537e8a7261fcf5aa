import Foundation
import HeraldCore
import HeraldKit
import HeraldNodeTesting
import HeraldTestSupport
import NIOCore
import Testing

/// `notification.ios.localizations`: each device gets the content of the language it
/// reported (`zh-Hans-CN` finds `zh-Hans`, `en-US` finds `en`), a device without one the
/// push's own, over APNs and over the MQTT connection.
@Suite struct LocalizedPushTests {
    static let ios: JSON = [
        "alert": "Sale today",
        "localizations": ["zh-Hans": ["title": "促销", "body": "今天五折"], "en": ["title": "Sale", "body": "Half price today"]],
    ]

    @Test func eachDeviceGetsTheContentOfItsLanguageOverAPNs() async throws {
        try await TestNode.run { test in
            let tokens = [TestNode.token(301), TestNode.token(302), TestNode.token(303)]
            let chinese = try await test.register(token: tokens[0], language: "zh-Hans-CN")
            let english = try await test.register(token: tokens[1], language: "en-US")
            let none = try await test.register(token: tokens[2])
            let sent = try await test.push([
                "audience": ["registration_id": [JSON(chinese.registrationID), JSON(english.registrationID), JSON(none.registrationID)]],
                "notification": ["ios": Self.ios],
            ])
            #expect(sent.status == 200)
            let m = sent.msgID
            let herald = #""herald":{"identifier":"\#(m)","msg_id":"\#(m)"}"#
            let expected = [
                #"{"aps":{"alert":{"body":"今天五折","title":"促销"}},\#(herald)}"#,
                #"{"aps":{"alert":{"body":"Half price today","title":"Sale"}},\#(herald)}"#,
                #"{"aps":{"alert":"Sale today"},\#(herald)}"#,
            ]
            for (token, payload) in zip(tokens, expected) {
                let received = try #require(try await test.waitForAPNs(token).first)
                #expect(String(decoding: received.payload, as: UTF8.self) == payload)
            }
        }
    }

    @Test func eachConnectedDeviceGetsTheContentOfItsLanguageOverMQTT() async throws {
        try await TestNode.run { test in
            let chinese = try await test.register(language: "zh-Hans-CN")
            let english = try await test.register(language: "en-US")
            let none = try await test.register()
            let connections = [
                try await test.rawConnection(chinese), try await test.rawConnection(english), try await test.rawConnection(none),
            ]
            let sent = try await test.push(["audience": "all", "notification": ["ios": Self.ios]])
            #expect(sent.status == 200)
            let m = sent.msgID
            let head = #"{"msg_id":"\#(m)","identifier":"\#(m)","type":"notification","notification":"#
            let expected = [
                head + #"{"title":"促销","alert":"今天五折"}}"#,
                head + #"{"title":"Sale","alert":"Half price today"}}"#,
                head + #"{"alert":"Sale today"}}"#,
            ]
            // A connection's first read of its inbox can race the push (a slow machine): then
            // the copy comes from the inbox as stored, with every language in it for the SDK
            // to choose from (HeraldClient's NotificationBody.localized(for:)).
            let stored =
                head + #"{"alert":"Sale today","localizations":{"en":{"body":"Half price today","title":"Sale"},"#
                + #""zh-Hans":{"body":"今天五折","title":"促销"}}}}"#
            for (connection, payload) in zip(connections, expected) {
                let publish = try #require(try await connection.nextPublish())
                let received = String(buffer: publish.payload)
                #expect(received == payload || received == stored, "\(received)")
            }
        }
    }

    @Test func aLanguageIsMatchedByDroppingSubtagsFromTheEnd() {
        let keys = ["zh-Hans", "zh", "en", "pt-BR"]
        #expect(PushLocalization.match("zh-Hans-CN", in: keys) == "zh-Hans")
        #expect(PushLocalization.match("zh-Hant-TW", in: keys) == "zh")
        #expect(PushLocalization.match("EN-gb", in: keys) == "en")
        #expect(PushLocalization.match("pt-PT", in: keys) == nil)
        #expect(PushLocalization.match(nil, in: keys) == nil)
        #expect(PushLocalization.match("fr", in: keys) == nil)
    }
}
