import Foundation
import HeraldCore
import HeraldKit
import HeraldMQTT
import HeraldNodeTesting
import HeraldTestSupport
import NIOCore
import Testing

/// Server-managed notification categories (issue #20) from the API to the devices: a push
/// naming one carries its configuration byte for byte over APNs (sandbox) and the MQTT
/// connection, as it was when the push was accepted; `deliver` sends it ahead; devices'
/// reported versions are counted.
@Suite struct CategoryDeliveryTests {
    static let category = category(buyTitle: "Buy")

    static func category(buyTitle: String) -> JSON {
        [
            "identifier": "push_extension_sale",
            "options": ["customDismissAction"],
            "default_router": ["router_url": "shop://sale/42"],
            "actions": [
                [
                    "identifier": "buy", "title": JSON(buyTitle), "options": ["foreground"],
                    "router": ["router_url": "shop://cart/add?item=42", "parameters": ["item": 42]],
                ],
                [
                    "identifier": "reply", "title": "Reply", "behavior": "textInput", "text_input_button_title": "Send",
                    "text_input_placeholder": "Say something",
                ],
            ],
        ]
    }

    /// `notification_config` of ``category`` at `version`, as rendered (sorted keys,
    /// slashes unescaped): the names it was defined with as the iOS raw values.
    static func config(version: Int, buyTitle: String = "Buy") -> String {
        #"{"actions":[{"identifier":"buy","options":4,"router":{"parameters":{"item":42},"router_url":"shop://cart/add?item=42"},"title":"\#(buyTitle)"},"#
            + #"{"behavior":1,"identifier":"reply","text_input_button_title":"Send","text_input_placeholder":"Say something","title":"Reply"}],"#
            + #""default_router":{"router_url":"shop://sale/42"},"identifier":"push_extension_sale","options":1,"version":\#(version)}"#
    }

    static let content: JSON = [
        "alert": ["title": "Sale", "body": "50% off"], "category": "push_extension_sale", "media_url": "https://cdn.example.com/a.jpg",
    ]

    @Test func aPushNamingACategoryCarriesItsConfigurationByteExactOverAPNsAndMQTT() async throws {
        try await TestNode.run { test in
            let created = try await test.call("POST", "/v3/categories", Self.category)
            #expect(created.status == 200)
            #expect(created.json["version"].int == 1)
            let token = TestNode.token(201)
            let offline = try await test.register(token: token)
            let online = try await test.register()
            let connection = try await test.rawConnection(online)
            let sent = try await test.push([
                "audience": ["registration_id": [JSON(offline.registrationID), JSON(online.registrationID)]],
                "notification": ["ios": Self.content],
            ])
            #expect(sent.status == 200)
            let msgID = sent.msgID
            let publish = try #require(try await connection.nextPublish())
            let expectedTCP =
                #"{"msg_id":"\#(msgID)","identifier":"\#(msgID)","type":"notification","notification":{"title":"Sale","alert":"50% off","#
                + #""media_url":"https://cdn.example.com/a.jpg","notification_config":\#(Self.config(version: 1))}}"#
            #expect(String(buffer: publish.payload) == expectedTCP)
            let received = try #require(try await test.waitForAPNs(token).first)
            let expectedAPNs =
                #"{"aps":{"alert":{"body":"50% off","title":"Sale"},"category":"push_extension_sale","mutable-content":1},"#
                + #""herald":{"identifier":"\#(msgID)","media_url":"https://cdn.example.com/a.jpg","msg_id":"\#(msgID)"},"#
                + #""notification_config":\#(Self.config(version: 1))}"#
            #expect(String(decoding: received.payload, as: UTF8.self) == expectedAPNs)
            #expect(received.pushType == "alert")
        }
    }

    @Test func aCategoryTheAppDoesNotDefineIsOnlyAPNsCategoryField() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(202)
            let device = try await test.register(token: token)
            let sent = try await test.push([
                "audience": ["registration_id": [JSON(device.registrationID)]],
                "notification": ["ios": ["alert": "hi", "category": "MEETING"]],
            ])
            #expect(sent.status == 200)
            let received = try #require(try await test.waitForAPNs(token).first)
            let msgID = sent.msgID
            #expect(
                String(decoding: received.payload, as: UTF8.self)
                    == #"{"aps":{"alert":"hi","category":"MEETING"},"herald":{"identifier":"\#(msgID)","msg_id":"\#(msgID)"}}"#
            )
        }
    }

    @Test func updatingACategoryRaisesItsVersionAndLeavesAcceptedPushesAsTheyWere() async throws {
        try await TestNode.run { test in
            #expect(try await test.call("POST", "/v3/categories", Self.category).status == 200)
            let device = try await test.register()
            let before = try await test.push([
                "audience": ["registration_id": [JSON(device.registrationID)]], "notification": ["ios": Self.content],
            ])
            #expect(before.status == 200)
            let updated = try await test.call("PUT", "/v3/categories/push_extension_sale", Self.category(buyTitle: "Buy now"))
            #expect(updated.status == 200)
            #expect(updated.json["version"].int == 2)
            #expect(try await test.call("GET", "/v3/categories/push_extension_sale").json["actions"][0]["title"].string == "Buy now")
            let after = try await test.push([
                "audience": ["registration_id": [JSON(device.registrationID)]], "notification": ["ios": Self.content],
            ])
            #expect(after.status == 200)
            // The device connects after both were accepted: the first as it was accepted.
            let connection = try await test.rawConnection(device)
            var configs: [String: JSON] = [:]
            for _ in 0..<2 {
                let publish = try #require(try await connection.nextPublish())
                let json = try JSONDecoder().decode(JSON.self, from: Data(publish.payload.readableBytesView))
                configs[json["msg_id"].string ?? ""] = json["notification"]["notification_config"]
            }
            #expect(configs[before.msgID]?["version"].int == 1)
            #expect(configs[before.msgID]?["actions"][0]["title"].string == "Buy")
            #expect(configs[after.msgID]?["version"].int == 2)
            #expect(configs[after.msgID]?["actions"][0]["title"].string == "Buy now")
        }
    }

    @Test func deliverSendsTheConfigurationAheadAndReportedVersionsAreCounted() async throws {
        try await TestNode.run { test in
            #expect(try await test.call("POST", "/v3/categories", Self.category).status == 200)
            let token = TestNode.token(203)
            let offline = try await test.register(token: token)
            let online = try await test.register()
            let connection = try await test.rawConnection(online)
            let delivered = try await test.call(
                "POST",
                "/v3/categories/push_extension_sale/deliver",
                ["audience": ["registration_id": [JSON(offline.registrationID), JSON(online.registrationID)]]]
            )
            #expect(delivered.status == 200)
            #expect(delivered.json["version"].int == 1)
            let msgID = delivered.msgID
            let publish = try #require(try await connection.nextPublish())
            #expect(
                String(buffer: publish.payload)
                    == #"{"msg_id":"\#(msgID)","identifier":"\#(msgID)","type":"category_config","notification_config":\#(Self.config(version: 1))}"#
            )
            let received = try #require(try await test.waitForAPNs(token).first)
            #expect(received.pushType == "background")
            #expect(received.priority == 5)
            #expect(received.headers["apns-push-type"] == "background")
            #expect(
                String(decoding: received.payload, as: UTF8.self)
                    == #"{"aps":{"content-available":1},"herald":{"identifier":"\#(msgID)","msg_id":"\#(msgID)"},"notification_config":\#(Self.config(version: 1))}"#
            )

            // Each device reports the version it holds; the count follows the latest report.
            #expect(try await test.call("PUT", "/v3/categories/push_extension_sale", Self.category).json["version"].int == 2)
            let other = try await test.rawConnection(offline)
            try await Self.report(connection, online, version: 2)
            try await Self.report(other, offline, version: 1)
            let counted = try await Self.devices(test) { $0["total"].int == 2 }
            #expect(counted["version"].int == 2)
            #expect(counted["devices"] == [["version": 1, "count": 1], ["version": 2, "count": 1]])
            try await Self.report(other, offline, version: 2)
            let recounted = try await Self.devices(test) { $0["devices"] == [["version": 2, "count": 2]] }
            #expect(recounted["devices"] == [["version": 2, "count": 2]])
        }
    }

    @Test func aPushWithACategoryOverAPNsLimitIsRefusedWithItsSizeAndNothingIsStored() async throws {
        try await TestNode.run { test in
            let actions = (0..<4).map { index -> JSON in
                [
                    "identifier": JSON("a\(index)"), "title": JSON(String(repeating: "t", count: 256)),
                    "router": ["router_url": JSON("shop://" + String(repeating: "p", count: 900))],
                ]
            }
            let big: JSON = ["identifier": "push_extension_sale", "actions": .array(actions)]
            #expect(try await test.call("POST", "/v3/categories", big).status == 200)
            let device = try await test.register(token: TestNode.token(204))
            let sent = try await test.push([
                "audience": ["registration_id": [JSON(device.registrationID)]],
                "notification": ["ios": ["alert": "hi", "category": "push_extension_sale"]],
            ])
            #expect(sent.status == 413)
            #expect(sent.error == HeraldError.Code.payloadTooLarge.rawValue)
            let message = sent.json["error"]["message"].string ?? ""
            #expect(
                message.hasPrefix("notification.ios.category: the APNs payload would be 5119 bytes, 1023 over APNs' limit of 4096 bytes"),
                "\(message)"
            )
            #expect(try await test.count("messages") == 0)
            #expect(try await test.count("push_jobs") == 0)
        }
    }

    /// `GET /v3/categories/push_extension_sale/devices` once `done` holds of it (or after 10 s).
    static func devices(_ test: TestNode, until done: (JSON) -> Bool) async throws -> JSON {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let answer = try await test.call("GET", "/v3/categories/push_extension_sale/devices").json
            if done(answer) || ContinuousClock.now > deadline { return answer }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Publishes a `category_version` event as the SDK does.
    static func report(_ connection: TestMQTTClient, _ device: DeviceCredentials, version: Int) async throws {
        let event = #"{"event":"category_version","category":"push_extension_sale","version":\#(version)}"#
        try await connection.send(.publish(.init(topic: "herald/\(device.registrationID)/events", payload: ByteBuffer(string: event))))
    }
}

/// The batch single pushes carry the categories their entries name, as `/v3/push` does.
@Suite struct BatchCategoryTests {
    @Test func aBatchEntryNamingACategoryCarriesItsConfiguration() async throws {
        try await TestNode.run { test in
            #expect(try await test.call("POST", "/v3/categories", CategoryDeliveryTests.category).status == 200)
            let token = TestNode.token(205)
            let device = try await test.register(token: token)
            let sent = try await test.call(
                "POST",
                "/v3/push/batch/regid/single",
                [
                    "pushlist": [
                        "cid-1": ["target": JSON(device.registrationID), "platform": "all", "notification": ["ios": CategoryDeliveryTests.content]]
                    ]
                ]
            )
            #expect(sent.status == 200)
            let msgID = try #require(sent.json["cid-1"]["msg_id"].string, "\(sent.json)")
            let received = try #require(try await test.waitForAPNs(token).first)
            let expected =
                #"{"aps":{"alert":{"body":"50% off","title":"Sale"},"category":"push_extension_sale","mutable-content":1},"#
                + #""herald":{"identifier":"\#(msgID)","media_url":"https://cdn.example.com/a.jpg","msg_id":"\#(msgID)"},"#
                + #""notification_config":\#(CategoryDeliveryTests.config(version: 1))}"#
            #expect(String(decoding: received.payload, as: UTF8.self) == expected)
        }
    }
}
