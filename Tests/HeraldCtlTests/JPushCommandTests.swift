import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import PostgresNIO
import Testing

/// `heraldctl devices status`, `aliases remove` and `report`: JPush's views from a terminal.
@Suite struct JPushCommandTests {
    static func rows(_ result: CLIResult) -> [[String]] {
        result.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
    }

    @Test func devicesStatusShowsPresence() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let other = try await test.createApp("Other")
            let gone = try await test.registerDevice(app)
            let never = try await test.registerDevice(app)
            let foreign = try await test.registerDevice(other)
            try await test.store.sql.query(
                """
                INSERT INTO device_sessions (device_id, epoch, node_id, last_seen_at)
                SELECT id, 1, NULL, '2025-01-31 08:15:00+00' FROM devices WHERE registration_id = \(gone)
                """,
                logger: TestDatabase.logger
            )
            let result = try await test.operator_(app, "devices", "status", gone, never, foreign)
            #expect(result.status == 0, "\(result)")
            #expect(
                Self.rows(result) == [
                    ["REGISTRATION_ID", "ONLINE", "LAST_ONLINE"], [gone, "no", "2025-01-31", "08:15:00"], [never, "no", "-"],
                    [foreign, "not", "in", "this", "app", "-"],
                ],
                "\(result)"
            )
            let json = try await test.operator_(app, "devices", "status", gone, "--json")
            #expect(try (json.json[gone] as? [String: Any])?["last_online_time"] as? String == "2025-01-31 08:15:00")
            #expect(try await test.operator_(app, "devices", "status").status == 64)
        }
    }

    @Test func pushSendsAJPushBodyAsItIsAndShowsItsWarnings() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let rid = try await test.registerDevice(app)
            let file = test.home.appendingPathComponent("jpush.json")
            let body = """
                {"platform": "all", "audience": {"registration_id": ["\(rid)"]},
                 "notification": {"alert": "Hi", "android": {"alert": "Hi", "style": 1}, "hmos": {"alert": "Hi"}},
                 "options": {"sendno": 7}}
                """
            try Data(body.utf8).write(to: file)
            let result = try await test.operator_(app, "push", "--body", file.path)
            #expect(result.status == 0, "\(result)")
            let msgID = try #require(result.field("msg_id"))
            #expect(Int64(msgID) != nil, "\(result)")
            #expect(result.field("warning")?.hasPrefix("notification.hmos: ") == true, "\(result)")
            #expect(try await test.store.api.reports.messages(appID: app.app.id, msgIDs: [msgID]).count == 1)

            let json = try await test.operator_(app, "push", "--body", file.path, "--json")
            #expect(try json.json["sendno"] as? String == "7", "\(json)")

            let mixed = try await test.operator_(app, "push", "--body", file.path, "--alert", "x")
            #expect(mixed.status == 64)
            #expect(mixed.stderr.contains("--body is the whole request; put --alert in it instead."), "\(mixed)")
            let missing = try await test.operator_(app, "push", "--body", test.home.appendingPathComponent("nope.json").path)
            #expect(missing.status == 64, "\(missing)")
        }
    }

    @Test func aliasesRemoveTakesTheAliasFromTheseDevicesOnly() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let first = try await test.registerDevice(app)
            let second = try await test.registerDevice(app)
            for rid in [first, second] { #expect(try await test.operator_(app, "devices", "update", rid, "--alias", "team").status == 0) }
            let result = try await test.operator_(app, "aliases", "remove", "team", first)
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout == "took the alias team from 1 device\n")
            #expect(try await test.device(app, first)?.alias == nil)
            #expect(try await test.device(app, second)?.alias == "team")
            let unknown = try await test.operator_(app, "aliases", "remove", "team", second, "0123456789abcdef0123")
            #expect(unknown.status == 1)
            #expect(unknown.stderr.hasPrefix("error \(HeraldError.Code.deviceNotFound.rawValue): "), "\(unknown)")
            #expect(try await test.device(app, second)?.alias == "team")
        }
    }

    @Test func reportShowsJPushsViewsOfAMessage() async throws {
        try await CenterCtlTest.run { test in
            let device = try await test.iosDevice(alias: "ios")
            let sent = try await test.heraldctl("push", "--alias", "ios", "--alert", "Body", "--json")
            let msgID = try #require(try sent.json["msg_id"] as? String)
            #expect(try await test.apns(device.token).count == 1)
            #expect(try await test.heraldctl("status", msgID, "--watch", "--wait-timeout", "30").status == 0)

            let channels = try await test.heraldctl("report", msgID)
            #expect(channels.status == 0, "\(channels)")
            #expect(
                Self.rows(channels) == [
                    ["MSG_ID", "VIEW", "CHANNEL", "TARGET", "SENT", "RECEIVED", "CLICK"],
                    [msgID, "notification", "all", "1", "1", "0", "0"],
                    [msgID, "notification", "jg_android", "0", "0", "0", "0"],
                    [msgID, "notification", "jg_ios", "0", "0", "0", "0"],
                    [msgID, "notification", "apns", "1", "1", "0", "0"],
                ],
                "\(channels)"
            )
            let received = try await test.heraldctl("report", msgID, "--received")
            #expect(
                Self.rows(received) == [
                    ["MSG_ID", "JPUSH_RECEIVED", "IOS_APNS_SENT", "IOS_APNS_RECEIVED", "IOS_MSG_RECEIVED"], [msgID, "0", "1", "0", "0"],
                ],
                "\(received)"
            )
            let json = try await test.heraldctl("report", msgID, "--json")
            #expect(json.stdout.hasPrefix("[{"), "\(json)")

            let unknown = String(repeating: "0", count: 24)
            let missing = try await test.heraldctl("report", msgID, unknown)
            #expect(missing.status == 1)
            #expect(missing.stderr == "error: no message \(unknown) in this app\n")
        }
    }
}
