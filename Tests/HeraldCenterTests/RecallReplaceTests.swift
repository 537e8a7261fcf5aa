import Foundation
import HeraldAPNsSandbox
import HeraldCore
import HeraldKit
import HeraldNode
import HeraldNodeTesting
import HeraldTestSupport
import Testing

/// Recall and replace by identifier, on both channels.
@Suite struct RecallReplaceTests {
    @Test func aRecalledUndeliveredCopyIsNeverDelivered() async throws {
        try await TestNode.run { test in
            let device = try await test.register(platform: "linux", alias: "away")
            let sent = try await test.push(["audience": ["alias": ["away"]], "notification": ["alert": "oops"]])
            _ = try await test.settledReport(sent.msgID)
            let recalled = try await test.call("DELETE", "/v3/push/\(sent.msgID)")
            #expect(recalled.status == 200)
            #expect(recalled.json["recalled"] == [JSON(sent.msgID)])
            let again = try await test.call("DELETE", "/v3/push/\(sent.msgID)")
            #expect(again.status == 200)
            let after = try await test.push(["audience": ["alias": ["away"]], "notification": ["alert": "fine"]])
            _ = try await test.settledReport(after.msgID)
            try await test.online(device) { reader in
                let event = try await reader.next(where: \.isNotification)
                #expect(event?.notification?.alert == "fine")
                #expect(try await reader.next(where: \.isNotification, timeout: .milliseconds(500)) == nil)
            }
            let report = try await test.settledReport(sent.msgID)
            #expect(report["recalled"].int == 1)
            #expect(try await test.status(sent.msgID, device.registrationID, becomes: "recalled") == "recalled")
        }
    }

    @Test func aDeviceThatGotItOverTCPGetsARecallCommand() async throws {
        try await TestNode.run { test in
            let device = try await test.register(platform: "linux", alias: "here")
            try await test.online(device) { reader in
                let sent = try await test.push([
                    "audience": ["alias": ["here"]], "notification": ["alert": "wrong price"], "options": ["identifier": "promo-7"],
                ])
                let shown = try await reader.next(where: \.isNotification)
                #expect(shown?.notification?.identifier == "promo-7")
                _ = try await test.settledReport(sent.msgID) { $0["tcp_delivered"].int == 1 }
                let recalled = try await test.call("POST", "/v3/push/recall", ["identifiers": ["promo-7"]])
                #expect(recalled.status == 200)
                #expect(recalled.json["recalled"] == [JSON(sent.msgID)])
                let command = try await reader.next(where: { if case .recall = $0 { true } else { false } })
                #expect(command == .recall(identifiers: ["promo-7"]))
            }
        }
    }

    /// A device holds the copy, but its acknowledgement isn't recorded yet (it is written in
    /// batches, or was lost on the way): a recall now still sends it the command. Before,
    /// the copy was taken for undelivered, cancelled, and the device never told.
    @Test func aRecallReachesADeviceWhoseAcknowledgementIsNotRecordedYet() async throws {
        try await TestNode.run { test in
            let device = try await test.register(platform: "linux", alias: "holder")
            let mqtt = try await test.rawConnection(device)
            let sent = try await test.push([
                "audience": ["alias": ["holder"]], "notification": ["alert": "wrong price"], "options": ["identifier": "promo-8"],
            ])
            // Received, never acknowledged.
            let held = try #require(try await mqtt.nextPublish(acknowledge: false))
            #expect(String(buffer: held.payload).contains(sent.msgID))
            let recalled = try await test.call("DELETE", "/v3/push/\(sent.msgID)")
            #expect(recalled.status == 200)
            var command: [String: Any]?
            let deadline = ContinuousClock.now + .seconds(20)
            while command == nil, ContinuousClock.now < deadline {
                guard let publish = try await mqtt.nextPublish(timeout: .seconds(2)) else { continue }
                let object = try JSONSerialization.jsonObject(with: Data(buffer: publish.payload)) as? [String: Any]
                if object?["type"] as? String == "recall" { command = object }
            }
            #expect(command?["identifiers"] as? [String] == ["promo-8"], "no recall command")
            await mqtt.close()
        }
    }

    @Test func anIOSDeviceThatGotItOverAPNsGetsASilentRecallWithEveryPendingIdentifier() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(20)
            _ = try await test.register(token: token, alias: "phone")
            let first = try await test.push(["audience": ["alias": ["phone"]], "notification": ["alert": "one"], "options": ["identifier": "n-1"]])
            let second = try await test.push(["audience": ["alias": ["phone"]], "notification": ["alert": "two"], "options": ["identifier": "n-2"]])
            _ = try await test.waitForAPNs(token, count: 2)
            #expect(test.sandbox.notificationCentre(for: token).shown.count == 2)
            _ = try await test.settledReport(second.msgID)
            let isRecall: @Sendable (RecordedNotification) -> Bool = { $0.json["herald-recall"] != .null }
            #expect(try await test.call("DELETE", "/v3/push/\(first.msgID)").status == 200)
            // Generous waits: under the whole suite's load a recall's job took over 10 s once.
            let afterFirst = try await test.waitForAPNs(token, matching: isRecall, timeout: .seconds(60))
            #expect(afterFirst.count == 1)
            #expect(afterFirst.last?.pushType == "background")
            #expect(afterFirst.last?.priority == 5)
            #expect(afterFirst.last?.json["herald-recall"].array?.compactMap(\.string) == ["n-1"])
            #expect(afterFirst.last?.json["aps"]["alert"].isNull == true)
            #expect(try await test.call("DELETE", "/v3/push/\(second.msgID)").status == 200)
            let afterSecond = try await test.waitForAPNs(token, count: 2, matching: isRecall, timeout: .seconds(60))
            // APNs coalesces background pushes: each carries every identifier still pending.
            #expect(afterSecond.last?.json["herald-recall"].array?.compactMap(\.string) == ["n-1", "n-2"])
            #expect(test.sandbox.notificationCentre(for: token).shown.isEmpty)
        }
    }

    @Test func recallAfterTheWindowIsAClearError() async throws {
        let shortWindow: @Sendable (inout HeraldNodeConfiguration) -> Void = { $0.node.recallWindow = .seconds(1) }
        try await TestNode.run(configure: shortWindow) { test in
            _ = try await test.register(platform: "linux", alias: "late")
            let sent = try await test.push(["audience": ["alias": ["late"]], "message": ["msg_content": "x"]])
            try await Task.sleep(for: .milliseconds(1200))
            let late = try await test.call("DELETE", "/v3/push/\(sent.msgID)")
            #expect(late.status == 410)
            #expect(late.error == HeraldError.Code.recallWindowClosed.rawValue)
            let unknown = try await test.call("DELETE", "/v3/push/0123456789abcdef01234567")
            #expect(unknown.error == HeraldError.Code.messageNotFound.rawValue)
        }
    }

    @Test func replaceReachesOnlineDevicesAsACommandAndIOSThroughTheSameCollapseID() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(30)
            let phone = try await test.register(token: token, tags: ["score"])
            let laptop = try await test.register(platform: "linux", tags: ["score"])
            _ = phone
            try await test.online(laptop) { reader in
                let first = try await test.push([
                    "audience": ["tag": ["score"]], "notification": ["alert": "1-0"], "options": ["identifier": "match-9"],
                ])
                #expect(try await reader.next(where: \.isNotification)?.notification?.alert == "1-0")
                _ = try await test.waitForAPNs(token)
                _ = try await test.settledReport(first.msgID)
                let second = try await test.push([
                    "audience": ["tag": ["score"]], "notification": ["alert": "2-0"], "options": ["replace": "match-9"],
                ])
                #expect(second.status == 200)
                let replace = try await reader.next(where: { if case .replace = $0 { true } else { false } })
                guard case .replace(let identifier, let notification) = replace else { throw TestFailure("no replace command") }
                #expect(identifier == "match-9")
                #expect(notification.alert == "2-0")
                let received = try await test.waitForAPNs(token, count: 2)
                #expect(received.map(\.collapseID) == ["match-9", "match-9"])
                let centre = test.sandbox.notificationCentre(for: token)
                #expect(centre.shown.count == 1)
                #expect(centre.shown.first?.notification.json["aps"]["alert"].string == "2-0")
            }
        }
    }

    @Test func aReplaceSupersedesAnUndeliveredOriginal() async throws {
        try await TestNode.run { test in
            let device = try await test.register(platform: "linux", alias: "sleepy")
            let first = try await test.push([
                "audience": ["alias": ["sleepy"]], "notification": ["alert": "old"], "options": ["identifier": "weather"],
            ])
            _ = try await test.settledReport(first.msgID)
            let second = try await test.push(["audience": ["alias": ["sleepy"]], "notification": ["alert": "new"], "options": ["replace": "weather"]])
            _ = try await test.settledReport(second.msgID)
            try await test.online(device) { reader in
                let event = try await reader.next(where: { if case .replace = $0 { true } else { $0.isNotification } })
                guard case .replace(_, let notification) = event else {
                    throw TestFailure("expected only the replacement, got \(String(describing: event))")
                }
                #expect(notification.alert == "new")
                #expect(try await reader.next(where: \.isNotification, timeout: .milliseconds(500)) == nil)
            }
            #expect(try await test.status(first.msgID, device.registrationID, becomes: "replaced") == "replaced")
        }
    }
}
