import Foundation
import HeraldCore
import HeraldNodeTesting
import HeraldTestSupport
import Testing

/// Message ids as a JPush client sees them, and the ones stored before they took JPush's
/// shape.
@Suite struct MsgIDShapeTests {
    @Test func thePushAnswersMsgIdIsADecimalThatParsesAsInt64AndLaterOnesAreLarger() async throws {
        try await TestNode.run { test in
            _ = try await test.register(platform: "linux", alias: "a")
            var previous: Int64 = 0
            for index in 0..<5 {
                // Group-committed (an explicit audience) and on its own (a cid) both.
                var body: JSON = ["audience": ["alias": ["a"]], "message": ["msg_content": "m"]]
                if index.isMultiple(of: 2) { body = ["audience": ["alias": ["a"]], "message": ["msg_content": "m"], "cid": JSON("c\(index)")] }
                let sent = try await test.push(body)
                #expect(sent.status == 200, "\(sent.json)")
                let msgID = try #require(sent.json["msg_id"].string)
                let value = try #require(Int64(msgID), "\(msgID)")
                #expect(value > previous)
                #expect(String(value) == msgID)
                previous = value
            }
        }
    }

    /// A database from before keeps working: a message stored with a 24-hex id is found by
    /// the report routes, recalled by `DELETE /v3/push/{msg_id}`, and purged by its age.
    @Test func aMessageStoredWithALegacyHexIdIsStillReportedAndRecalled() async throws {
        try await TestNode.run { test in
            let device = try await test.register(platform: "linux", alias: "away")
            let sent = try await test.push(["audience": ["alias": ["away"]], "notification": ["alert": "old"]])
            _ = try await test.settledReport(sent.msgID)
            let legacy = Identifiers.legacyMsgIDTime(milliseconds: UInt64(Date().timeIntervalSince1970 * 1000)) + "0123456789ab"
            #expect(Identifiers.isMsgID(legacy))
            try await test.stores.sql.query("UPDATE messages SET msg_id = \(legacy) WHERE msg_id = \(sent.msgID)")
            try await test.stores.sql.query("UPDATE device_messages SET msg_id = \(legacy) WHERE msg_id = \(sent.msgID)")

            let report = try await test.settledReport(legacy)
            #expect(report["msg_id"].string == legacy)
            #expect(try await test.status(legacy, device.registrationID, becomes: "waiting") == "waiting")
            let recalled = try await test.call("DELETE", "/v3/push/\(legacy)")
            #expect(recalled.status == 200, "\(recalled.json)")
            #expect(recalled.json["recalled"] == [JSON(legacy)])
            #expect(try await test.status(legacy, device.registrationID, becomes: "recalled") == "recalled")
            // An id never made, of either shape or of neither, is not found.
            for unknown in ["9223372036854775807", "0123", "0199a1b2c3d4e5f607182930"] {
                #expect(try await test.call("DELETE", "/v3/push/\(unknown)").error == HeraldError.Code.messageNotFound.rawValue)
            }
        }
    }
}
