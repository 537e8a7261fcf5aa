import Foundation
import HeraldCore
import HeraldNodeTesting
import HeraldTestSupport
import Testing

/// A schedule's push naming a category carries it as it is when the occurrence fires.
@Suite struct ScheduleCategoryTests {
    @Test func anOccurrenceCarriesTheCategoryAsItIsWhenItFires() async throws {
        let clock = ScheduleClock()
        try await TestNode.run(configure: ScheduleFiringTests.configure(clock)) { test in
            #expect(try await test.call("POST", "/v3/categories", CategoryDeliveryTests.category).status == 200)
            let token = TestNode.token(206)
            let device = try await test.register(token: token)
            let due = ScheduleFiringTests.at(ScheduleFiringTests.midnight(inDays: 1), "09:00:00")
            let created = try await test.call(
                "POST",
                "/v3/schedules",
                [
                    "name": "sale", "enabled": true, "trigger": ["single": ["time": JSON(due.description)]],
                    "push": ["audience": ["registration_id": [JSON(device.registrationID)]], "notification": ["ios": CategoryDeliveryTests.content]],
                ]
            )
            let scheduleID = try #require(created.json["schedule_id"].string, "\(created.json)")
            // Changed after the schedule was made, before it fires: the occurrence has version 2.
            let changed = try await test.call("PUT", "/v3/categories/push_extension_sale", CategoryDeliveryTests.category(buyTitle: "Buy now"))
            #expect(changed.json["version"].int == 2)
            clock.set(due.instant(in: ScheduleFiringTests.utc).addingTimeInterval(0.2))
            let runs = try await ScheduleFiringTests.runs(test, scheduleID, count: 1)
            let msgID = try #require(runs.first?["msg_id"].string, "\(runs)")
            let received = try #require(try await test.waitForAPNs(token).first)
            let expected =
                #"{"aps":{"alert":{"body":"50% off","title":"Sale"},"category":"push_extension_sale","mutable-content":1},"#
                + #""herald":{"identifier":"\#(msgID)","media_url":"https://cdn.example.com/a.jpg","msg_id":"\#(msgID)"},"#
                + #""notification_config":\#(CategoryDeliveryTests.config(version: 2, buyTitle: "Buy now"))}"#
            #expect(String(decoding: received.payload, as: UTF8.self) == expected)
            // The message stores what it was sent with.
            let stored = try await test.count("messages WHERE request::text LIKE '%\"version\": 2%' OR request::text LIKE '%\"version\":2%'")
            #expect(stored == 1)
        }
    }
}
