import Foundation
import HeraldCore
import HeraldNodeTesting
import HeraldTestSupport
import NIOCore
import Testing

/// A JPush push body from the request to the devices: `platform` narrows the audience,
/// each device gets its platform's rendering, and APNs gets the iOS part as Apple expects.
@Suite struct JPushDeliveryTests {
    /// Android and iOS parts of one notification, with extras of any JSON kind.
    static let notification: JSON = [
        "alert": "common",
        "android": ["title": "For Android", "builder_id": 2, "channel_id": "news", "extras": ["news_id": 134, "item": ["id": 7]]],
        "ios": [
            "alert": ["title": "For iOS", "body": "Fire drill", "loc-key": "DRILL", "loc-args": ["3"]],
            "sound": ["critical": 1, "name": "alarm.caf", "volume": 0.5],
            "badge": "5",
            "extras": ["news_id": 134, "item": ["id": 7]],
        ],
    ]

    @Test func eachDeviceGetsItsPlatformsRenderingAndAPlatformListReachesOnlyItsDevices() async throws {
        try await TestNode.run { test in
            let iosToken = TestNode.token(61)
            let ios = try await test.register(platform: "ios", token: iosToken)
            let android = try await test.register(platform: "android")
            let iosConnection = try await test.rawConnection(ios)
            // The iOS device is connected, the Android one isn't: its copy waits in its inbox.
            let both = try await test.push(["platform": ["android", "ios"], "audience": "all", "notification": Self.notification])
            #expect(both.status == 200)
            let iosPublish = try #require(try await iosConnection.nextPublish())
            let iosNotification = Self.json(iosPublish.payload)["notification"]
            #expect(iosNotification["alert"].string == "Fire drill")
            #expect(iosNotification["title"].string == "For iOS")
            #expect(iosNotification["loc-key"].string == "DRILL")
            #expect(iosNotification["badge"].int == 5)
            #expect(iosNotification["sound"]["name"].string == "alarm.caf")
            #expect(iosNotification["extras"]["news_id"].int == 134)
            #expect(iosNotification["builder_id"].isNull)
            let androidConnection = try await test.rawConnection(android)
            let stored = try #require(try await androidConnection.nextPublish())
            let androidNotification = Self.json(stored.payload)["notification"]
            #expect(Self.json(stored.payload)["msg_id"].string == both.msgID)
            #expect(androidNotification["alert"].string == "common")
            #expect(androidNotification["title"].string == "For Android")
            #expect(androidNotification["builder_id"].int == 2)
            #expect(androidNotification["channel_id"].string == "news")
            #expect(androidNotification["extras"]["item"]["id"].int == 7)
            #expect(androidNotification["sound"].isNull)

            // Android only: the Android device gets it, the iOS device nothing, by no channel.
            let androidOnly = try await test.push([
                "platform": ["android"], "audience": "all", "notification": ["alert": "Android only", "android": ["title": "A"]],
            ])
            #expect(androidOnly.status == 200)
            let live = try #require(try await androidConnection.nextPublish())
            #expect(Self.json(live.payload)["msg_id"].string == androidOnly.msgID)
            #expect(Self.json(live.payload)["notification"]["alert"].string == "Android only")
            let report = try await test.settledReport(androidOnly.msgID)
            #expect(report["targeted"].int == 1)
            #expect(report["tcp_delivered"].int == 1)
            #expect(try await test.status(androidOnly.msgID, ios.registrationID, becomes: "not_targeted") == "not_targeted")
            #expect(try await iosConnection.nextPublish(timeout: .milliseconds(500)) == nil)
            #expect(test.apnsReceived(iosToken).isEmpty)

            // To the iOS device's registration id with Android only: no device matches.
            let none = try await test.push([
                "platform": ["android"], "audience": ["registration_id": [JSON(ios.registrationID)]], "notification": ["alert": "x"],
            ])
            #expect(none.status == 400)
            #expect(none.error == HeraldError.Code.noAudienceMatch.rawValue)
            await iosConnection.close()
            await androidConnection.close()
        }
    }

    @Test func anOfflineIOSDeviceGetsTheIOSRenderingFromAPNsWithTheCriticalSoundAndExtras() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(62)
            let ios = try await test.register(platform: "ios", token: token)
            let android = try await test.register(platform: "android")
            let sent = try await test.push([
                "platform": "all", "audience": ["registration_id": [JSON(ios.registrationID), JSON(android.registrationID)]],
                "notification": Self.notification, "options": ["sendno": 7, "apns_collapse_id": "drill-1"],
            ])
            #expect(sent.status == 200)
            #expect(sent.json["sendno"].string == "7")
            let received = try await test.waitForAPNs(token)
            let notification = try #require(received.first)
            #expect(received.count == 1)
            #expect(notification.pushType == "alert")
            #expect(notification.collapseID == "drill-1")
            let aps = notification.json["aps"]
            #expect(aps["alert"]["title"].string == "For iOS")
            #expect(aps["alert"]["body"].string == "Fire drill")
            #expect(aps["alert"]["loc-key"].string == "DRILL")
            #expect(aps["alert"]["loc-args"][0].string == "3")
            #expect(aps["sound"]["critical"].int == 1)
            #expect(aps["sound"]["name"].string == "alarm.caf")
            #expect(aps["sound"]["volume"] == 0.5)
            #expect(aps["badge"].int == 5)
            #expect(notification.json["news_id"].int == 134)
            #expect(notification.json["item"]["id"].int == 7)
            #expect(notification.json["herald"]["msg_id"].string == sent.msgID)
            #expect(try await test.status(sent.msgID, ios.registrationID, becomes: "sent_apns") == "sent_apns")
            // The Android device has no APNs: its copy waits for its connection.
            #expect(try await test.status(sent.msgID, android.registrationID, becomes: "waiting") == "waiting")
        }
    }

    @Test func notificationVoIPGoesToTheVoIPTokenBesideTheAlert() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(63)
            let voipToken = TestNode.token(64)
            let ios = try await test.register(platform: "ios", token: token)
            #expect(try await test.call("POST", "/v3/devices/\(ios.registrationID)", ["voip_token": JSON(voipToken)]).status == 200)
            let sent = try await test.push([
                "platform": ["ios"], "audience": ["registration_id": [JSON(ios.registrationID)]],
                "notification": ["ios": ["alert": "Ann is calling"], "voip": ["caller": "Ann", "call_id": 42]],
            ])
            #expect(sent.status == 200)
            let alert = try #require(try await test.waitForAPNs(token).first)
            #expect(alert.pushType == "alert")
            #expect(alert.json["aps"]["alert"].string == "Ann is calling")
            let voip = try #require(try await test.waitForAPNs(voipToken).first)
            #expect(voip.pushType == "voip")
            #expect(voip.topic?.hasSuffix(".voip") == true)
            #expect(voip.json["caller"].string == "Ann")
            #expect(voip.json["call_id"].int == 42)
            #expect(voip.json["aps"].isNull)
            #expect(voip.json["herald"]["msg_id"].string == sent.msgID)
            let report = try await test.settledReport(sent.msgID)
            #expect(report["apns_sent"].int == 1)
            // A VoIP payload alone is the push's APNs delivery, to the VoIP token only.
            let alone = try await test.push([
                "audience": ["registration_id": [JSON(ios.registrationID)]], "notification": ["voip": ["caller": "Bob"]],
            ])
            #expect(alone.status == 200)
            let second = try await test.waitForAPNs(voipToken, count: 2)
            #expect(second.last?.json["caller"].string == "Bob")
            #expect(try await test.settledReport(alone.msgID)["apns_sent"].int == 1)
            #expect(test.apnsReceived(token).count == 1)
        }
    }

    @Test func theSDKHandsOnExtrasOfAnyKindAsText() async throws {
        try await TestNode.run { test in
            let android = try await test.register(platform: "android", alias: "droid")
            try await test.online(android) { reader in
                let sent = try await test.push([
                    "platform": ["android"], "audience": ["alias": ["droid"]],
                    "notification": ["android": ["alert": "Hi", "title": "T", "extras": ["news_id": 134, "name": "n", "item": ["id": 7]]]],
                    "message": ["msg_content": "m", "extras": ["count": 2, "on": true]],
                ])
                #expect(sent.status == 200)
                let notification = try #require(try await reader.next(where: \.isNotification)?.notification)
                #expect(notification.alert == "Hi")
                #expect(notification.title == "T")
                #expect(notification.extras == ["news_id": "134", "name": "n", "item": #"{"id":7}"#])
                let message = try #require(try await reader.next(where: { if case .message = $0 { true } else { false } }))
                guard case .message(let body) = message else { return }
                #expect(body.extras == ["count": "2", "on": "true"])
            }
        }
    }

    private static func json(_ payload: ByteBuffer) -> JSON {
        (try? JSONDecoder().decode(JSON.self, from: Data(payload.readableBytesView))) ?? .null
    }
}
