import Foundation
import HeraldCore
import HeraldNodeTesting
import Testing

/// What reaches APNs has the shape Apple requires, and what APNs would refuse is refused
/// at acceptance, before anything is stored or sent.
@Suite struct APNsPayloadShapeTests {
    @Test func aContentAvailableOnlyPushGoesAsABackgroundPushAtPriority5() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(41)
            let device = try await test.register(token: token)
            let sent = try await test.push([
                "audience": ["registration_id": [JSON(device.registrationID)]],
                "notification": ["ios": ["content-available": true, "extras": ["sync": "inbox"]]],
            ])
            #expect(sent.status == 200)
            let received = try await test.waitForAPNs(token)
            let notification = try #require(received.first)
            #expect(notification.pushType == "background")
            #expect(notification.priority == 5)
            let aps = notification.json["aps"]
            #expect(aps["content-available"].int == 1)
            #expect(aps["alert"].isNull)
            #expect(notification.json["sync"].string == "inbox")
        }
    }

    /// Apple takes priorities 10, 5 and 1: each goes as asked.
    @Test func eachPriorityApplesTakesIsSentAsAsked() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(43)
            let device = try await test.register(token: token)
            for priority in [1, 5, 10] {
                let sent = try await test.push([
                    "audience": ["registration_id": [JSON(device.registrationID)]],
                    "notification": ["alert": JSON("at \(priority)")],
                    "options": ["priority": JSON(priority)],
                ])
                #expect(sent.status == 200, "\(sent.json)")
                _ = try await test.settledReport(sent.msgID) { $0["apns_sent"].int == 1 }
            }
            let received = try await test.waitForAPNs(token, count: 3)
            #expect(received.map(\.priority) == [1, 5, 10])
        }
    }

    @Test func anOversizedPayloadIsRefusedAtAcceptanceAndNothingIsStoredOrSent() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(42)
            let device = try await test.register(token: token)
            for notification: JSON in [
                ["ios": ["alert": JSON(String(repeating: "x", count: 5000))]],
                ["alert": JSON(String(repeating: "x", count: 4096))],
                ["ios": ["alert": "hi", "extras": ["k": JSON(String(repeating: "e", count: 4500))]]],
            ] {
                let sent = try await test.push(["audience": ["registration_id": [JSON(device.registrationID)]], "notification": notification])
                #expect(sent.status == 413)
                #expect(sent.error == HeraldError.Code.payloadTooLarge.rawValue)
                let message = sent.json["error"]["message"].string ?? ""
                #expect(message.contains("over APNs' limit of 4096 bytes"), "\(message)")
            }
            #expect(try await test.count("messages") == 0)
            #expect(try await test.count("push_jobs") == 0)
            // A push that fits still goes through afterwards.
            let fits = try await test.push(["audience": ["registration_id": [JSON(device.registrationID)]], "notification": ["alert": "ok"]])
            #expect(fits.status == 200)
            #expect(try await test.waitForAPNs(token).count == 1)
        }
    }
}
