import Foundation
import HeraldCore
import HeraldKit
import HeraldNodeTesting
import HeraldTestSupport
import Testing

@testable import HeraldAPI

/// What a device's SDK reports after a message arrived (`POST /v3/devices/{rid}/receipts`):
/// in the copy's timeline and in the reports, each kind once.
@Suite struct ReceiptTests {
    @Test func receiptsAppearInTheTimelineAndTheReportOnceEach() async throws {
        try await TestNode.run { test in
            try await test.recordEvents()
            let token = TestNode.token(91)
            let device = try await test.register(token: token, alias: "receipts")
            let sent = try await test.push(["audience": ["alias": ["receipts"]], "notification": ["alert": "Hi"]])
            #expect(try await test.waitForAPNs(token).count == 1)
            _ = try await test.timeline(sent.msgID, device.registrationID, until: "sent_apns")
            let asDevice = Caller.basic(device.registrationID, device.deviceSecret)
            let id = UUID().uuidString
            let receipts: JSON = [
                "receipts": [
                    ["id": .string(id), "msg_id": .string(sent.msgID), "type": "delivered", "at": "2026-01-01T00:00:00Z"],
                    ["msg_id": .string(sent.msgID), "type": "displayed"],
                    ["msg_id": .string(sent.msgID), "type": "action", "action": "see"],
                    ["msg_id": .string(sent.msgID), "type": "opened"],
                ]
            ]
            let answer = try await test.call("POST", "/v3/devices/\(device.registrationID)/receipts", receipts, as: asDevice)
            #expect(answer.status == 200, "\(answer.json)")
            #expect(answer.json["recorded"].int == 4)
            // Sent again (its answer lost): nothing changes.
            #expect(try await test.call("POST", "/v3/devices/\(device.registrationID)/receipts", receipts, as: asDevice).status == 200)

            let timeline = try await test.timeline(sent.msgID, device.registrationID, until: "opened")
            let types = (timeline.json["timeline"].array ?? []).map { $0["type"].string ?? "" }
            #expect(types == ["accepted", "stored", "sent_apns", "delivered", "displayed", "action", "opened"], "\(timeline.json)")
            let action = (timeline.json["timeline"].array ?? []).first { $0["type"].string == "action" }
            #expect(action?["data"]["action"].string == "see")

            let received = try await test.call("GET", "/v3/received?msg_ids=\(sent.msgID)").json[0]
            #expect(received["ios_apns_received"].int == 1, "\(received)")
            #expect(try await test.count("deliveries WHERE received_at IS NOT NULL AND displayed_at IS NOT NULL AND opened_at IS NOT NULL") == 1)
            #expect(try await test.count("delivery_actions WHERE action = 'see'") == 1)
            // Herald's report, and JPush's detail view: what the device reported.
            let report = try await test.settledReport(sent.msgID)
            #expect(report["device"]["delivered"].int == 1 && report["device"]["displayed"].int == 1, "\(report)")
            #expect(report["device"]["dismissed"].int == 0 && report["device"]["dropped"].int == 0)
            #expect(report["device"]["actions"][0]["action"].string == "see" && report["device"]["actions"][0]["count"].int == 1)
            #expect(report["opened"].int == 1)
            let detail = try await test.call("GET", "/v3/messages/detail?msg_ids=\(sent.msgID)").json[0]["details"]["notification"]
            #expect(detail["display"].int == 1 && detail["sub_ios"]["apns"]["display"].int == 1, "\(detail)")
            #expect(detail["sub_android"]["jg_android"]["display"].isNull)
        }
    }

    /// HeraldKit's queue, flushed through its API client, as an app sends them.
    @Test func theSDKsQueueSendsItsReceiptsOnce() async throws {
        try await TestNode.run { test in
            try await test.recordEvents()
            let token = TestNode.token(92)
            let device = try await test.register(token: token, alias: "sdk-receipts")
            let sent = try await test.push(["audience": ["alias": ["sdk-receipts"]], "notification": ["alert": "Hi"]])
            #expect(try await test.waitForAPNs(token).count == 1)
            let queue = ReceiptQueue(url: nil)
            try queue.add(Receipt(msgID: sent.msgID, kind: .delivered))
            try queue.add(Receipt(msgID: sent.msgID, kind: .dismissed))
            let api = HeraldAPIClient(baseURL: test.apiURL, appKey: test.appKey)
            #expect(try await queue.flush { try await api.sendReceipts($0, credentials: device) } == 2)
            #expect(try queue.pending().isEmpty)
            #expect(try await test.count("deliveries WHERE received_at IS NOT NULL AND dismissed_at IS NOT NULL") == 1)
        }
    }

    /// What the SDK could not use reaches the copy's timeline with the reason, once.
    @Test func aDroppedReceiptKeepsItsReasonInTheTimeline() async throws {
        try await TestNode.run { test in
            try await test.recordEvents()
            let token = TestNode.token(93)
            let device = try await test.register(token: token, alias: "dropped")
            let sent = try await test.push(["audience": ["alias": ["dropped"]], "notification": ["alert": "Hi"]])
            #expect(try await test.waitForAPNs(token).count == 1)
            // The copy's own events first (written in batches): receipts come after them.
            _ = try await test.timeline(sent.msgID, device.registrationID, until: "sent_apns")
            let queue = ReceiptQueue(url: nil)
            try queue.add(Receipt(msgID: sent.msgID, kind: .dropped, reason: "notification_config: actions[0].title: missing\u{7}"))
            try queue.add(Receipt(msgID: sent.msgID, kind: .displayed))
            let api = HeraldAPIClient(baseURL: test.apiURL, appKey: test.appKey)
            #expect(try await queue.flush { try await api.sendReceipts($0, credentials: device) } == 2)
            let again = [Receipt(msgID: sent.msgID, kind: .dropped, reason: "another reason")]
            #expect(try await api.sendReceipts(again, credentials: device) == 1)
            let timeline = try await test.timeline(sent.msgID, device.registrationID, until: "displayed")
            let events = timeline.json["timeline"].array ?? []
            #expect(events.map { $0["type"].string ?? "" } == ["accepted", "stored", "sent_apns", "dropped", "displayed"], "\(timeline.json)")
            #expect(events.first { $0["type"].string == "dropped" }?["data"]["reason"].string == "notification_config: actions[0].title: missing ")
            #expect(try await test.count("deliveries WHERE dropped_reason = 'notification_config: actions[0].title: missing '") == 1)
        }
    }

    @Test func badReceiptsAreRefusedWithTheFieldNamedAndOnlyTheDeviceItselfMayReport() async throws {
        try await TestNode.run { test in
            let device = try await test.register(platform: "linux")
            let other = try await test.register(platform: "linux")
            let asDevice = Caller.basic(device.registrationID, device.deviceSecret)
            let path = "/v3/devices/\(device.registrationID)/receipts"
            let msgID = "1810000000012345678"
            let cases: [(JSON, String)] = [
                (["receipts": []], "receipts"),
                (["receipts": [["msg_id": "nope", "type": "opened"]]], "receipts[0].msg_id"),
                (["receipts": [["msg_id": .string(msgID), "type": "teleported"]]], "receipts[0].type"),
                (["receipts": [["msg_id": .string(msgID), "type": "action"]]], "receipts[0].action"),
                (["receipts": [["msg_id": .string(msgID), "type": "opened", "action": "see"]]], "receipts[0].action"),
                (["receipts": [["msg_id": .string(msgID), "type": "opened", "at": "yesterday"]]], "receipts[0].at"),
                (["receipts": [["msg_id": .string(msgID), "type": "opened", "id": "x"]]], "receipts[0].id"),
                (["receipts": [["msg_id": .string(msgID), "type": "dropped"]]], "receipts[0].reason"),
                (["receipts": [["msg_id": .string(msgID), "type": "dropped", "reason": ""]]], "receipts[0].reason"),
                (["receipts": [["msg_id": .string(msgID), "type": "dropped", "reason": "a\u{0}b"]]], "receipts[0].reason"),
                (
                    ["receipts": [["msg_id": .string(msgID), "type": "dropped", "reason": .string(String(repeating: "é", count: 201))]]],
                    "receipts[0].reason"
                ),
                (["receipts": [["msg_id": .string(msgID), "type": "opened", "reason": "why"]]], "receipts[0].reason"),
            ]
            for (body, field) in cases {
                let answer = try await test.call("POST", path, body, as: asDevice)
                #expect(answer.status == 400, "\(body)")
                #expect(answer.json["error"]["message"].string?.contains(field) == true, "\(body): \(answer.json)")
            }
            // A message this device was not sent: ignored.
            let unknown = try await test.call("POST", path, ["receipts": [["msg_id": .string(msgID), "type": "displayed"]]], as: asDevice)
            #expect(unknown.status == 200 && unknown.json["recorded"].int == 0)
            // Another device's credentials: refused.
            let foreign = try await test.call(
                "POST",
                path,
                ["receipts": [["msg_id": .string(msgID), "type": "displayed"]]],
                as: .basic(other.registrationID, other.deviceSecret)
            )
            #expect(foreign.status == 403)
        }
    }

    @Test(arguments: [
        ("2026-11-29T08:00:00Z", 1_795_939_200.0),
        ("2026-11-29t08:00:00z", 1_795_939_200.0),
        ("2026-11-29T08:00:00.250Z", 1_795_939_200.25),
        ("2026-11-29T10:00:00+02:00", 1_795_939_200.0),
        ("2026-11-29T07:30:00-00:30", 1_795_939_200.0),
        ("2016-12-31T23:59:60Z", 1_483_228_799.0),
    ])
    func receiptTimesAreRFC3339(text: String, seconds: Double) throws {
        let date = try #require(ReceiptsRequest.rfc3339(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.001)
    }

    @Test(arguments: ["yesterday", "2026-11-29", "2026-11-29T08:00:00", "2026-02-30T08:00:00Z", "2026-11-29T25:00:00Z", "2026-11-29T08:00:00.Z"])
    func notATime(text: String) {
        #expect(ReceiptsRequest.rfc3339(text) == nil)
    }
}
