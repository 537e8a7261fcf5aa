import Foundation
import HeraldCore
import HeraldKit
import HeraldNodeTesting
import HeraldTestSupport
import Testing

/// `heraldctl push --at/--every/--local-time` and `heraldctl schedules`.
@Suite struct ScheduleCommandTests {
    /// A wall time in UTC (the test app's zone) `seconds` from now.
    static func wall(in seconds: Double) -> String {
        LocalDateTime(Date().addingTimeInterval(seconds), in: TimeZone(identifier: "UTC")!).description
    }

    @Test func pushAtMakesASingleScheduleThatFiresAndShowKeepsItsHistory() async throws {
        try await CenterCtlTest.run { test in
            let device = try await test.iosDevice(alias: "later")
            // Eight seconds ahead, so that it is still to come when it is listed on a loaded
            // machine (three was not, once on CI); the scheduler wakes at the due time, not at
            // its poll.
            let at = Self.wall(in: 8)
            let made = try await test.heraldctl("push", "--alias", "later", "--alert", "Scheduled hello", "--at", at, "--schedule-name", "hello")
            #expect(made.status == 0, "\(made)")
            let scheduleID = try #require(made.field("schedule_id"), "\(made)")
            #expect(UUID(uuidString: scheduleID) != nil)
            #expect(made.field("name") == "hello")

            let listed = try await test.heraldctl("schedules", "list")
            #expect(listed.stdout.contains(scheduleID) && listed.stdout.contains("at \(at)"), "\(listed)")

            let received = try await test.apns(device.token, timeout: .seconds(30))
            #expect((received.first?.payloadJSON?["aps"] as? [String: Any])?["alert"] as? String == "Scheduled hello")
            // Fired: the single schedule has finished, its history stays.
            let shown = try await test.heraldctl("schedules", "show", scheduleID)
            #expect(shown.status == 0, "\(shown)")
            #expect(shown.stdout.contains("finished"), "\(shown)")
            #expect(shown.stdout.contains("sent"), "\(shown)")
            #expect(try await test.messageCount() == 1)
        }
    }

    @Test func pushEveryMakesAPeriodicalScheduleThatCanBeDisabledEnabledAndDeleted() async throws {
        try await CenterCtlTest.run { test in
            let made = try await test.heraldctl(
                "push",
                "--tag",
                "news",
                "--alert",
                "Digest",
                "--every",
                "week",
                "--point",
                "mon",
                "--point",
                "FRI",
                "--time",
                "09:00:00",
                "--local-time",
                "--time-zone",
                "Asia/Shanghai"
            )
            #expect(made.status == 0, "\(made)")
            let scheduleID = try #require(made.field("schedule_id"), "\(made)")
            let shown = try await test.heraldctl("schedules", "show", scheduleID)
            #expect(shown.field("when")?.hasPrefix("every week on MON, FRI at 09:00:00") == true, "\(shown)")
            #expect(shown.field("when")?.hasSuffix(", local time") == true, "\(shown)")
            #expect(shown.field("time_zone") == "Asia/Shanghai")
            #expect(shown.stdout.contains("no occurrence yet"))

            #expect(try await test.heraldctl("schedules", "disable", scheduleID).status == 0)
            #expect(try await test.heraldctl("schedules", "show", scheduleID).field("enabled") == "no")
            #expect(try await test.heraldctl("schedules", "enable", scheduleID).status == 0)
            let json = try await test.heraldctl("schedules", "show", scheduleID, "--json")
            #expect(try json.json["enabled"] as? Bool == true)

            #expect(try await test.heraldctl("schedules", "delete", scheduleID).status == 0)
            let gone = try await test.heraldctl("schedules", "show", scheduleID)
            #expect(gone.status == 1 && gone.stderr.contains("error 8104"), "\(gone)")
        }
    }

    @Test func badScheduleFlagsAreUsageErrorsAndTheAPIsErrorsArePrinted() async throws {
        try await CenterCtlTest.run { test in
            let usage: [[String]] = [
                ["push", "--all", "--alert", "x", "--at", "tomorrow"],
                ["push", "--all", "--alert", "x", "--every", "day"],
                ["push", "--all", "--alert", "x", "--every", "week", "--time", "09:00:00"],
                ["push", "--all", "--alert", "x", "--every", "day", "--time", "09:00:00", "--point", "MON"],
                ["push", "--all", "--alert", "x", "--time", "09:00:00"],
                ["push", "--all", "--alert", "x", "--at", Self.wall(in: 60), "--wait"],
            ]
            for arguments in usage {
                let result = try await test.ctl.heraldctl(
                    arguments,
                    environment: ["HERALD_APP_KEY": test.app.app.appKey, "HERALD_MASTER_SECRET": test.app.masterSecret]
                )
                #expect(result.status == 64, "\(arguments): \(result)")
            }
            let past = try await test.heraldctl("push", "--all", "--alert", "x", "--at", Self.wall(in: -3600))
            #expect(past.status == 1 && past.stderr.contains("error 8100"), "\(past)")
            #expect(try await test.heraldctl("schedules", "list").stdout == "no schedules\n")
        }
    }

    @Test func schedulesCreateTakesAJPushScheduleObject() async throws {
        try await CenterCtlTest.run { test in
            let file = test.ctl.home.appendingPathComponent("schedule.json")
            let body =
                #"{"name": "from_file", "enabled": true, "trigger": {"single": {"time": "\#(Self.wall(in: 86_400))"}}, "push": {"platform": "all", "audience": "all", "notification": {"alert": "x"}}}"#
            try Data(body.utf8).write(to: file)
            let made = try await test.heraldctl("schedules", "create", "--body", file.path)
            #expect(made.status == 0 && made.field("name") == "from_file", "\(made)")
            let listed = try await test.heraldctl("schedules", "list", "--json")
            #expect(try listed.json["total_count"] as? Int == 1)
        }
    }
}
