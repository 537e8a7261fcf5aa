import Foundation
import HeraldCore
import HeraldMQTT
import HeraldNodeTesting
import HeraldTestSupport
import PostgresNIO
import Testing

/// An app's quiet hours and daily cap on its operations pushes, in each device's local
/// time: held until the window ends (or dropped), capped per local day; system pushes go
/// through.
@Suite struct DeliveryControlsTests {
    private static func msgID(_ publish: MQTTPacket.Publish?) -> String? {
        guard let publish, let object = try? JSONSerialization.jsonObject(with: Data(publish.payload.readableBytesView)) as? [String: Any]
        else { return nil }
        return object["msg_id"] as? String
    }

    /// Quiet hours that hold, from `start` to `end` seconds from now, in UTC.
    private static func holding(from start: TimeInterval, to end: TimeInterval) -> JSON {
        [
            "quiet_hours": [
                "start": JSON(localTime(in: "UTC", plus: start)), "end": JSON(localTime(in: "UTC", plus: end)), "action": "hold",
            ]
        ]
    }

    /// `HH:MM:SS` of now plus `offset` seconds in `zone`.
    private static func localTime(in zone: String, plus offset: TimeInterval) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zone)!
        let parts = calendar.dateComponents([.hour, .minute, .second], from: Date().addingTimeInterval(offset))
        return String(format: "%02d:%02d:%02d", parts.hour!, parts.minute!, parts.second!)
    }

    private func settings(_ test: TestNode, _ body: JSON) async throws {
        let answer = try await test.call("PATCH", "/admin/v1/apps/\(test.appKey)", body, as: .admin)
        #expect(answer.status == 200, "\(answer.json)")
    }

    private func setZone(_ test: TestNode, _ rid: String, _ zone: String) async throws {
        try await test.stores.sql.query("UPDATE devices SET time_zone = \(zone) WHERE registration_id = \(rid)", logger: TestDatabase.logger)
    }

    private func message(_ text: String, to rid: String, classification: Int? = nil) -> JSON {
        var options: [String: JSON] = [:]
        if let classification { options["classification"] = JSON(classification) }
        return ["audience": ["registration_id": [JSON(rid)]], "message": ["msg_content": JSON(text)], "options": .object(options)]
    }

    @Test func anOperationsPushInsideQuietHoursWaitsForTheirEndWhileASystemPushGoesAtOnce() async throws {
        try await TestNode.run { test in
            let sleeper = try await test.register(platform: "linux")
            let traveller = try await test.register(platform: "linux")
            try await setZone(test, sleeper.registrationID, "Europe/Paris")
            // Quiet in Paris from an hour ago until 4 s from now; in Tokyo it is 7 or 8 hours later.
            try await settings(
                test,
                [
                    "quiet_hours": [
                        "start": JSON(Self.localTime(in: "Europe/Paris", plus: -3600)),
                        "end": JSON(Self.localTime(in: "Europe/Paris", plus: 4)), "action": "hold",
                    ]
                ]
            )
            try await setZone(test, traveller.registrationID, "Asia/Tokyo")
            let sleeping = try await test.rawConnection(sleeper)
            let awake = try await test.rawConnection(traveller)

            let held = try await test.push(message("sale", to: sleeper.registrationID))
            #expect(held.status == 200, "\(held.json)")
            let system = try await test.push(message("password changed", to: sleeper.registrationID, classification: 1))
            #expect(Self.msgID(try await sleeping.nextPublish()) == system.msgID, "the system push goes through at once")
            let abroad = try await test.push(message("sale", to: traveller.registrationID))
            #expect(Self.msgID(try await awake.nextPublish()) == abroad.msgID, "Tokyo is not in its quiet hours")

            let report = try await test.call("GET", "/v3/report/received?msg_ids=\(held.msgID)").json["reports"][0]
            #expect(report["held"].int == 1 && report["done"].bool == false, "\(report)")
            // Released when the window ends, into the inbox, and sent.
            #expect(Self.msgID(try await sleeping.nextPublish(timeout: .seconds(15))) == held.msgID)
            let settled = try await test.settledReport(held.msgID)
            #expect(settled["held"].int == 0 && settled["tcp_delivered"].int == 1, "\(settled)")
        }
    }

    /// Quiet hours set to null: what they held goes at once, not at the old window's end.
    @Test func copiesHeldByQuietHoursAreReleasedWhenTheQuietHoursAreRemoved() async throws {
        try await TestNode.run { test in
            let device = try await test.register(platform: "linux")
            let connection = try await test.rawConnection(device)
            try await settings(test, Self.holding(from: -3600, to: 3600))
            let held = try await test.push(message("sale", to: device.registrationID))
            #expect(try await test.status(held.msgID, device.registrationID, becomes: "held") == "held")

            try await settings(test, ["quiet_hours": .null])
            #expect(Self.msgID(try await connection.nextPublish(timeout: .seconds(15))) == held.msgID)
            #expect(try await test.status(held.msgID, device.registrationID, becomes: "delivered_tcp") == "delivered_tcp")
        }
    }

    /// A changed window is judged again: a copy still inside it waits for its new end, one
    /// now outside it goes at once.
    @Test func copiesHeldByQuietHoursAreJudgedAgainByAChangedWindow() async throws {
        try await TestNode.run { test in
            let device = try await test.register(platform: "linux")
            let connection = try await test.rawConnection(device)
            try await settings(test, Self.holding(from: -3600, to: 3600))
            let held = try await test.push(message("sale", to: device.registrationID))
            #expect(try await test.status(held.msgID, device.registrationID, becomes: "held") == "held")

            // Longer: still held, now until the new end.
            try await settings(test, Self.holding(from: -3600, to: 3 * 3600))
            let deadline = ContinuousClock.now + .seconds(15)
            var until: Date?
            while ContinuousClock.now < deadline {
                let rows = try await test.stores.sql.query(
                    "SELECT next_attempt_at FROM deliveries WHERE state = 'held'",
                    logger: TestDatabase.logger
                )
                until = nil
                for try await at in rows.decode(Date.self) { until = at }
                if let until, until > Date().addingTimeInterval(2 * 3600) { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(until.map { $0 > Date().addingTimeInterval(2 * 3600) } == true, "\(String(describing: until))")
            #expect(try await test.status(held.msgID, device.registrationID) == "held")

            // Moved past now: released.
            try await settings(test, Self.holding(from: 3600, to: 2 * 3600))
            #expect(Self.msgID(try await connection.nextPublish(timeout: .seconds(15))) == held.msgID)
            #expect(try await test.status(held.msgID, device.registrationID, becomes: "delivered_tcp") == "delivered_tcp")
        }
    }

    /// The window is read in the app's zone (for a device that reports none): a new zone
    /// judges what it held again.
    @Test func copiesHeldByQuietHoursAreJudgedAgainWhenTheAppsZoneChanges() async throws {
        try await TestNode.run { test in
            let device = try await test.register(platform: "linux")
            let connection = try await test.rawConnection(device)
            try await settings(test, Self.holding(from: -3600, to: 3600))
            let held = try await test.push(message("sale", to: device.registrationID))
            #expect(try await test.status(held.msgID, device.registrationID, becomes: "held") == "held")

            // Nine hours later in Tokyo: outside the window.
            let zone = try await test.call("PUT", "/admin/v1/apps/\(test.appKey)/time_zone", ["time_zone": "Asia/Tokyo"], as: .admin)
            #expect(zone.status == 200 || zone.status == 204, "\(zone.json)")
            #expect(Self.msgID(try await connection.nextPublish(timeout: .seconds(15))) == held.msgID)
            #expect(try await test.status(held.msgID, device.registrationID, becomes: "delivered_tcp") == "delivered_tcp")
        }
    }

    @Test func dropSendsNothingInsideTheWindowAndTheCapDropsTheThirdOfADay() async throws {
        try await TestNode.run { test in
            let device = try await test.register(platform: "linux")
            let connection = try await test.rawConnection(device)
            try await settings(
                test,
                [
                    "quiet_hours": [
                        "start": JSON(Self.localTime(in: "UTC", plus: -60)), "end": JSON(Self.localTime(in: "UTC", plus: 3600)),
                        "action": "drop",
                    ]
                ]
            )
            let dropped = try await test.push(message("sale", to: device.registrationID))
            let report = try await test.settledReport(dropped.msgID)
            #expect(report["dropped"].int == 1 && report["held"].int == 0, "\(report)")
            #expect(try await test.status(dropped.msgID, device.registrationID, becomes: "dropped") == "dropped")
            // Dropped is final: still dropped once the message's time to live has run out.
            try await test.stores.sql.query(
                "UPDATE messages SET expires_at = now() - interval '1 second' WHERE msg_id = \(dropped.msgID)",
                logger: TestDatabase.logger
            )
            #expect(try await test.status(dropped.msgID, device.registrationID) == "dropped")

            try await settings(test, ["quiet_hours": .null, "daily_cap": 2])
            var got: [String] = []
            var sent: [String] = []
            for index in 1...3 {
                sent.append(try await test.push(message("offer \(index)", to: device.registrationID)).msgID)
                _ = try await test.settledReport(sent.last!)
            }
            while let publish = try await connection.nextPublish(timeout: .seconds(2)) { got.append(Self.msgID(publish) ?? "?") }
            #expect(got == Array(sent.prefix(2)), "\(got) of \(sent)")
            #expect(try await test.status(sent[2], device.registrationID, becomes: "dropped") == "dropped")
            let system = try await test.push(message("security alert", to: device.registrationID, classification: 1))
            #expect(Self.msgID(try await connection.nextPublish()) == system.msgID, "system pushes are not capped")
        }
    }

    @Test func badSettingsAreRefusedAndChangeNothing() async throws {
        try await TestNode.run { test in
            let path = "/admin/v1/apps/\(test.appKey)"
            for body: JSON in [
                ["quiet_hours": ["start": "25:00", "end": "08:00"]], ["quiet_hours": ["start": "22:00", "end": "22:00"]],
                ["quiet_hours": ["start": "22:00", "end": "08:00", "action": "delay"]], ["quiet_hours": ["start": "22:00"]],
                ["daily_cap": 0], ["daily_cap": 1001],
            ] {
                let answer = try await test.call("PATCH", path, body, as: .admin)
                #expect(answer.status == 400, "\(body): \(answer.json)")
            }
            let app = try await test.call("GET", path, as: .admin).json
            #expect(app["quiet_hours"].isNull && app["daily_cap"].isNull, "\(app)")
            try await settings(test, ["quiet_hours": ["start": "22:00", "end": "07:30"], "daily_cap": 5])
            let set = try await test.call("GET", path, as: .admin).json
            #expect(set["quiet_hours"]["start"].string == "22:00:00" && set["quiet_hours"]["end"].string == "07:30:00")
            #expect(set["quiet_hours"]["action"].string == "hold" && set["daily_cap"].int == 5)
        }
    }
}
