import Foundation
import HeraldAPNsSandbox
import HeraldCore
import HeraldNodeTesting
import Testing

/// Live Activity pushes end to end: the device registers its ActivityKit tokens, a start
/// goes to its push-to-start token and an update or end to the activity's token, each as a
/// `liveactivity` push on the `.push-type.liveactivity` topic with Apple's payload.
@Suite struct LiveActivityTests {
    private static let attributes: JSON = ["order": "A-17", "store": "Central"]

    @Test func aStartUpdateAndEndReachTheirTokensWithApplesHeadersAndPayload() async throws {
        try await TestNode.run { test in
            let bundleID = "dev.herald.app\(test.appID)"
            let deviceToken = TestNode.token(71)
            let startToken = TestNode.token(72)
            let activityToken = TestNode.token(73)
            let device = try await test.register(token: deviceToken)
            test.sandbox.registerDevice(deviceToken, topic: bundleID)
            test.sandbox.registerLiveActivityToken(startToken, topic: bundleID, kind: .pushToStart)
            test.sandbox.registerLiveActivityToken(activityToken, topic: bundleID, kind: .update)
            let rid = device.registrationID
            let setStart = try await test.call(
                "PUT",
                "/v3/devices/\(rid)/live_activities/push_to_start/DeliveryAttributes",
                ["token": JSON(startToken.uppercased())],
                as: .basic(rid, device.deviceSecret)
            )
            #expect(setStart.status == 204)

            let start = try await test.push([
                "audience": ["registration_id": [JSON(rid)]],
                "live_activity": [
                    "ios": [
                        "event": "start", "attributes-type": "DeliveryAttributes", "attributes": Self.attributes,
                        "content-state": ["status": "preparing", "eta": 20], "alert": ["title": "Order", "body": "Preparing"],
                        "stale-date": 1_900_000_000, "relevance-score": 50, "apns-priority": 5,
                    ]
                ],
            ])
            #expect(start.status == 200, "\(start.json)")
            #expect(start.json["warnings"].isNull || !"\(start.json["warnings"])".contains("live_activity"))
            let started = try #require(try await test.waitForAPNs(startToken).first)
            #expect(started.pushType == "liveactivity")
            #expect(started.topic == bundleID + ".push-type.liveactivity")
            #expect(started.priority == 5)
            var aps = started.json["aps"]
            let sentAt = try #require(aps["timestamp"].int)
            #expect(abs(sentAt - Int(Date().timeIntervalSince1970)) < 60)
            #expect(aps["event"].string == "start")
            #expect(aps["attributes-type"].string == "DeliveryAttributes")
            #expect(aps["attributes"] == Self.attributes)
            #expect(aps["content-state"] == ["status": "preparing", "eta": 20])
            #expect(aps["alert"] == ["title": "Order", "body": "Preparing"])
            #expect(aps["stale-date"].int == 1_900_000_000)
            #expect(aps["relevance-score"].int == 50)
            #expect(started.json["herald"]["msg_id"].string == start.msgID)
            let startReport = try await test.settledReport(start.msgID) { $0["apns_sent"].int == 1 }
            #expect(startReport["apns_sent"].int == 1)

            // The app started the activity and reports its update token.
            let setActivity = try await test.call(
                "PUT",
                "/v3/devices/\(rid)/live_activities/order-A-17",
                ["token": JSON(activityToken)],
                as: .basic(rid, device.deviceSecret)
            )
            #expect(setActivity.status == 204)
            let listed = try await test.call("GET", "/v3/devices/\(rid)/live_activities")
            #expect(listed.json == ["push_to_start": ["DeliveryAttributes": JSON(startToken)], "activities": ["order-A-17": JSON(activityToken)]])

            let update = try await test.push([
                "audience": ["live_activity_id": "order-A-17"],
                "live_activity": ["ios": ["event": "update", "content-state": ["status": "on the way", "eta": 8]]],
            ])
            #expect(update.status == 200, "\(update.json)")
            let updated = try #require(try await test.waitForAPNs(activityToken).first)
            #expect(updated.pushType == "liveactivity")
            #expect(updated.topic == bundleID + ".push-type.liveactivity")
            #expect(updated.priority == 10)
            aps = updated.json["aps"]
            #expect(aps["event"].string == "update")
            #expect(aps["timestamp"].int != nil)
            #expect(aps["content-state"] == ["status": "on the way", "eta": 8])
            #expect(aps["attributes"].isNull && aps["attributes-type"].isNull)

            let end = try await test.push([
                "audience": ["live_activity_id": "order-A-17"],
                "live_activity": ["ios": ["event": "end", "content-state": ["status": "delivered", "eta": 0], "dismissal-date": 1_800_000_000]],
            ])
            #expect(end.status == 200, "\(end.json)")
            let ended = try await test.waitForAPNs(activityToken, count: 2)
            #expect(ended.count == 2)
            #expect(ended.last?.json["aps"]["event"].string == "end")
            #expect(ended.last?.json["aps"]["dismissal-date"].int == 1_800_000_000)
            let endReport = try await test.settledReport(end.msgID) { $0["apns_sent"].int == 1 }
            #expect(endReport["apns_sent"].int == 1)
            // None of it went to the device's notification token, nor any rejection.
            #expect(test.apnsReceived(deviceToken).isEmpty)
            #expect(test.sandbox.rejections.isEmpty)
        }
    }

    @Test func aLiveActivityPushGoesOverAPNsEvenToAConnectedDevice() async throws {
        try await TestNode.run { test in
            let startToken = TestNode.token(75)
            let device = try await test.register(token: TestNode.token(74))
            let set = try await test.call(
                "PUT",
                "/v3/devices/\(device.registrationID)/live_activities/push_to_start/Score",
                ["token": JSON(startToken)]
            )
            #expect(set.status == 204)
            try await test.online(device) { _ in
                let sent = try await test.push([
                    "audience": "all",
                    "live_activity": ["ios": ["event": "start", "attributes-type": "Score", "attributes": [:], "content-state": ["home": 1]]],
                ])
                #expect(sent.status == 200, "\(sent.json)")
                #expect(try await test.waitForAPNs(startToken).count == 1)
                #expect(try await test.status(sent.msgID, device.registrationID, becomes: "sent_apns") == "sent_apns")
            }
            // Nothing of it waits in the inbox for the connection.
            #expect(try await test.count("device_messages") == 0)
        }
    }

    /// APNs' 410 for an ActivityKit token removes it, though the app records no delivery
    /// events (the default).
    @Test func aDeadLiveActivityTokenIsRemovedWithoutDeliveryEvents() async throws {
        try await TestNode.run { test in
            let startToken = TestNode.token(79)
            let device = try await test.register(token: TestNode.token(80))
            let path = "/v3/devices/\(device.registrationID)/live_activities"
            let set = try await test.call("PUT", path + "/push_to_start/Score", ["token": JSON(startToken)])
            #expect(set.status == 204)
            test.sandbox.markUnregistered(startToken, since: Date().addingTimeInterval(5))
            let sent = try await test.push([
                "audience": ["registration_id": [JSON(device.registrationID)]],
                "live_activity": ["ios": ["event": "start", "attributes-type": "Score", "attributes": [:], "content-state": ["home": 1]]],
            ])
            #expect(sent.status == 200, "\(sent.json)")
            let report = try await test.settledReport(sent.msgID) { $0["apns_failed"].int == 1 }
            #expect(report["apns_failures"].array?.first?["reason"].string == "Unregistered")
            let listed = try await test.call("GET", path)
            #expect(listed.status == 200)
            #expect(listed.json["push_to_start"]["Score"].isNull, "\(listed.json)")
        }
    }

    @Test func aTokenOfTheWrongKindIsRefusedBySandboxAndTheReportSaysWhy() async throws {
        try await TestNode.run { test in
            let bundleID = "dev.herald.app\(test.appID)"
            let token = TestNode.token(77)
            let device = try await test.register(token: TestNode.token(78))
            // The app mistook an activity's update token for its push-to-start token.
            test.sandbox.registerLiveActivityToken(token, topic: bundleID, kind: .update)
            let set = try await test.call("PUT", "/v3/devices/\(device.registrationID)/live_activities/push_to_start/Score", ["token": JSON(token)])
            #expect(set.status == 204)
            let sent = try await test.push([
                "audience": ["registration_id": [JSON(device.registrationID)]],
                "live_activity": ["ios": ["event": "start", "attributes-type": "Score", "attributes": [:], "content-state": ["home": 1]]],
            ])
            #expect(sent.status == 200, "\(sent.json)")
            let report = try await test.settledReport(sent.msgID) { $0["apns_failed"].int == 1 }
            #expect(report["apns_failed"].int == 1)
            #expect(report["apns_failures"].array?.first?["reason"].string == "DeviceTokenNotForTopic")
            #expect(test.sandbox.rejections.map(\.reason) == ["DeviceTokenNotForTopic"])
            #expect(test.apnsReceived(token).isEmpty)
        }
    }

    @Test func badLiveActivityRequestsAreRefusedAndChangeNothing() async throws {
        try await TestNode.run { test in
            let device = try await test.register(token: TestNode.token(76))
            let rid = JSON(device.registrationID)
            let update: JSON = ["ios": ["event": "update", "content-state": ["a": 1]]]
            let cases: [(JSON, Int)] = [
                // An update needs the activity named.
                (["audience": ["registration_id": [rid]], "live_activity": update], HeraldError.Code.missingField.rawValue),
                // live_activity_id only goes with live_activity.
                (["audience": ["live_activity_id": "x"], "notification": ["alert": "hi"]], HeraldError.Code.invalidField.rawValue),
                // Not beside a notification.
                (
                    ["audience": ["live_activity_id": "x"], "live_activity": update, "notification": ["alert": "hi"]],
                    HeraldError.Code.invalidField.rawValue
                ),
                // A start needs its attributes.
                (
                    ["audience": "all", "live_activity": ["ios": ["event": "start", "attributes-type": "T", "content-state": [:]]]],
                    HeraldError.Code.invalidField.rawValue
                ),
                // No device holds the activity's token.
                (["audience": ["live_activity_id": "nobody"], "live_activity": update], HeraldError.Code.noAudienceMatch.rawValue),
            ]
            for (body, code) in cases {
                let answer = try await test.push(body)
                #expect(answer.status == 400, "\(body)")
                #expect(answer.error == code, "\(body): \(answer.json)")
            }
            let badToken = try await test.call("PUT", "/v3/devices/\(device.registrationID)/live_activities/a1", ["token": "zz"])
            #expect(badToken.error == HeraldError.Code.invalidField.rawValue)
            #expect(try await test.count("messages") == 0)
            #expect(try await test.count("live_activity_tokens") == 0)
        }
    }
}
