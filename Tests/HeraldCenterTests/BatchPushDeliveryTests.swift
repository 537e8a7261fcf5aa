import Foundation
import HeraldCore
import HeraldKit
import HeraldNodeTesting
import HeraldTestSupport
import Testing

/// A batch single push on a whole node: each entry reaches its own device, as the push it
/// stands for.
@Suite struct BatchPushDeliveryTests {
    @Test func eachEntryReachesItsDeviceWithItsOwnContent() async throws {
        try await TestNode.run { test in
            let first = try await test.register(platform: "linux")
            let second = try await test.register(platform: "linux", alias: "second")
            let body: JSON = [
                "pushlist": [
                    "to-first": ["target": JSON(first.registrationID), "notification": ["alert": "for first"]],
                    "to-nobody": ["target": JSON(Identifiers.newRegistrationID()), "notification": ["alert": "lost"]],
                ]
            ]
            let byAlias: JSON = ["pushlist": ["to-second": ["target": "second", "message": ["msg_content": "for second"]]]]
            try await test.online(first) { firstReader in
                try await test.online(second) { secondReader in
                    let answer = try await test.call("POST", "/v3/push/batch/regid/single", body)
                    #expect(answer.status == 200, "\(answer.json)")
                    let msgID = try #require(answer.json["to-first"]["msg_id"].string, "\(answer.json)")
                    #expect(answer.json["to-nobody"]["error"]["code"].int == HeraldError.Code.noAudienceMatch.rawValue)
                    let aliased = try await test.call("POST", "/v3/push/batch/alias/single", byAlias)
                    let aliasMsgID = try #require(aliased.json["to-second"]["msg_id"].string, "\(aliased.json)")

                    let notification = try await firstReader.next(where: \.isNotification)
                    #expect(notification?.notification?.alert == "for first")
                    #expect(notification?.notification?.messageID == msgID)
                    let message = try await secondReader.next(where: \.isMessage)
                    #expect(message?.message?.content == "for second")
                    #expect(message?.message?.messageID == aliasMsgID)
                    #expect(try await test.settledReport(msgID)["tcp_delivered"].int == 1)
                    #expect(try await test.settledReport(aliasMsgID)["tcp_delivered"].int == 1)
                }
            }
            #expect(try await test.count("messages WHERE cid IN ('to-first', 'to-second')") == 2)
            #expect(try await test.count("messages") == 2)
        }
    }
}
