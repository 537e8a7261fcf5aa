import Foundation
import HeraldCenter
import HeraldCore
import HeraldKit
import HeraldNode
import HeraldNodeTesting
import HeraldStore
import HeraldTestSupport
import NIOConcurrencyHelpers
import Testing

/// Schedules firing on a node: at their instants, once each with several schedulers, after
/// a restart, and in each device's local time.
///
/// The schedulers read a clock the test moves (``ScheduleClock``), so occurrences a day
/// apart (JPush's shortest period) are reached in milliseconds; the rest is real: the
/// database, the node, the devices on MQTT.
@Suite struct ScheduleFiringTests {
    static let utc = TimeZone(identifier: "UTC")!

    /// The wall time of midnight UTC `days` days from now.
    static func midnight(inDays days: Int) -> LocalDateTime {
        let date = LocalDateTime(Date().addingTimeInterval(Double(days) * 86_400), in: utc)
        return LocalDateTime(year: date.year, month: date.month, day: date.day)
    }

    static func at(_ day: LocalDateTime, plusDays days: Int = 0, _ time: String) -> LocalDateTime {
        LocalDateTime(dayNumber: day.dayNumber + days, time: TimeOfDay(parsing: time)!)
    }

    static func configure(_ clock: ScheduleClock) -> @Sendable (inout HeraldNodeConfiguration) -> Void {
        { configuration in
            configuration.center.schedulePollInterval = .milliseconds(50)
            configuration.center.scheduleClock = { clock.now }
        }
    }

    /// The schedule's runs (`GET /v3/schedules/{id}/msg_ids`), once `count` are there.
    static func runs(_ test: TestNode, _ scheduleID: String, count: Int, timeout: Duration = .seconds(10)) async throws -> [JSON] {
        let deadline = ContinuousClock.now + timeout
        var runs: [JSON] = []
        while ContinuousClock.now < deadline {
            runs = try await test.call("GET", "/v3/schedules/\(scheduleID)/msg_ids").json["runs"].array ?? []
            if runs.count >= count { return runs }
            try await Task.sleep(for: .milliseconds(20))
        }
        return runs
    }

    @Test func aDailyScheduleFiresAtEachOccurrenceOnceAndItsDeviceGetsEach() async throws {
        let clock = ScheduleClock()
        try await TestNode.run(configure: Self.configure(clock)) { test in
            let device = try await test.register(platform: "linux", alias: "daily")
            let start = Self.midnight(inDays: 1)
            let created = try await test.call(
                "POST",
                "/v3/schedules",
                [
                    "name": "daily", "enabled": true,
                    "trigger": [
                        "periodical": [
                            "start": JSON(start.description), "end": JSON(Self.at(start, plusDays: 5, "00:00:00").description),
                            "time": "09:00:00", "time_unit": "day", "frequency": 1,
                        ]
                    ],
                    "push": ["platform": "all", "audience": ["alias": ["daily"]], "message": ["msg_content": "good morning"]],
                ]
            )
            let scheduleID = try #require(created.json["schedule_id"].string, "\(created.json)")
            try await test.online(device) { reader in
                for day in 0..<3 {
                    let due = Self.at(start, plusDays: day, "09:00:00").instant(in: Self.utc)
                    clock.set(due.addingTimeInterval(-1))
                    #expect(try await reader.next(where: \.isMessage, timeout: .milliseconds(400)) == nil, "day \(day): fired early")
                    clock.set(due.addingTimeInterval(0.2))
                    let event = try await reader.next(where: \.isMessage)
                    #expect(event?.message?.content == "good morning", "day \(day)")
                    let runs = try await Self.runs(test, scheduleID, count: day + 1)
                    #expect(runs.count == day + 1)
                    #expect(runs.last?["occurrence"].string == due.formatted(.iso8601), "day \(day)")
                    #expect(runs.last?["state"].string == "sent")
                    #expect(runs.last?["msg_id"].string == event?.message?.messageID)
                }
                #expect(try await reader.next(where: \.isMessage, timeout: .milliseconds(300)) == nil)
            }
            let answer = try await test.call("GET", "/v3/schedules/\(scheduleID)/msg_ids")
            #expect(answer.json["count"].int == 3)
            #expect(Set(answer.json["runs"].array?.compactMap { $0["msg_id"].string } ?? []).count == 3)
            #expect(try await test.count("messages") == 3)
        }
    }

    @Test func twoSchedulersOnOneDatabaseFireEachOccurrenceOnce() async throws {
        let clock = ScheduleClock()
        try await TestNode.run(configure: Self.configure(clock)) { test in
            _ = try await test.register(platform: "linux", alias: "many")
            let due = Self.at(Self.midnight(inDays: 1), "09:00:00")
            var ids: [String] = []
            for index in 0..<20 {
                let created = try await test.call(
                    "POST",
                    "/v3/schedules",
                    [
                        "name": JSON("race_\(index)"), "enabled": true, "trigger": ["single": ["time": JSON(due.description)]],
                        "push": ["audience": ["alias": ["many"]], "message": ["msg_content": JSON("m\(index)")]],
                    ]
                )
                ids.append(try #require(created.json["schedule_id"].string))
            }
            // A second scheduler, as another node runs it: its own pools on the same database.
            let (stores, pools) = TestDatabase.makeStores(test.databaseURL)
            var configuration = CenterConfiguration()
            configuration.schedulePollInterval = .milliseconds(50)
            configuration.scheduleClock = { clock.now }
            let other = Scheduler(configuration: configuration, store: stores.api, changes: nil, logger: TestDatabase.logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for pool in pools { group.addTask { try await pool.run() } }
                group.addTask { try await other.run() }
                defer { group.cancelAll() }
                try await Task.sleep(for: .milliseconds(200))
                clock.set(due.instant(in: Self.utc).addingTimeInterval(0.5))
                try await waitUntilAsync("every schedule to fire") { try await test.count("schedule_runs") >= 20 }
                try await Task.sleep(for: .milliseconds(500))
            }
            #expect(try await test.count("schedule_runs") == 20)
            #expect(try await test.count("schedule_runs WHERE state = 'sent'") == 20)
            #expect(try await test.count("messages") == 20)
            for id in ids {
                let runs = try await Self.runs(test, id, count: 1)
                #expect(runs.count == 1 && runs.first?["state"].string == "sent")
                // A single schedule that fired has finished, as JPush's does.
                #expect(try await test.call("GET", "/v3/schedules/\(id)").status == 404)
            }
        }
    }

    @Test func eachZonesDevicesGetALocalTimePushAtTheirOwnNineOClock() async throws {
        let clock = ScheduleClock()
        try await TestNode.run(configure: Self.configure(clock)) { test in
            let tokyo = try await test.register(platform: "linux", tags: ["local"], timeZone: "Asia/Tokyo")
            let berlin = try await test.register(platform: "linux", tags: ["local"], timeZone: "Europe/Berlin")
            let unknown = try await test.register(platform: "linux", tags: ["local"])
            let nine = Self.at(Self.midnight(inDays: 2), "09:00:00")
            let created = try await test.call(
                "POST",
                "/v3/schedules",
                [
                    "name": "breakfast", "enabled": true, "local_time": true,
                    "trigger": ["single": ["time": JSON(nine.description)]],
                    "push": ["audience": ["tag": ["local"]], "message": ["msg_content": "breakfast"]],
                ]
            )
            let scheduleID = try #require(created.json["schedule_id"].string, "\(created.json)")
            try await test.online(tokyo) { tokyoReader in
                try await test.online(berlin) { berlinReader in
                    try await test.online(unknown) { unknownReader in
                        try await Self.deliverInTurn(clock: clock, nine: nine, tokyo: tokyoReader, berlin: berlinReader, unknown: unknownReader)
                    }
                }
            }
            let runs = try await Self.runs(test, scheduleID, count: 3)
            #expect(Set(runs.compactMap { $0["time_zone"].string }) == ["Asia/Tokyo", "Europe/Berlin", Self.utc.identifier])
            #expect(runs.allSatisfy { $0["state"].string == "sent" })
        }
    }
}

extension ScheduleFiringTests {
    /// Moves the clock to 09:00 in Tokyo, in Berlin, then in UTC (the schedule's zone) and
    /// sees each zone's device get the push then, and only then.
    static func deliverInTurn(clock: ScheduleClock, nine: LocalDateTime, tokyo: EventReader, berlin: EventReader, unknown: EventReader) async throws {
        clock.set(nine.instant(in: TimeZone(identifier: "Asia/Tokyo")!).addingTimeInterval(0.2))
        let tokyoGot = try await tokyo.next(where: \.isMessage)
        #expect(tokyoGot?.message?.content == "breakfast")
        let berlinEarly = try await berlin.next(where: \.isMessage, timeout: .milliseconds(300))
        let unknownEarly = try await unknown.next(where: \.isMessage, timeout: .milliseconds(100))
        #expect(berlinEarly == nil && unknownEarly == nil)

        clock.set(nine.instant(in: TimeZone(identifier: "Europe/Berlin")!).addingTimeInterval(0.2))
        let berlinGot = try await berlin.next(where: \.isMessage)
        #expect(berlinGot?.message?.content == "breakfast")
        let unknownStillEarly = try await unknown.next(where: \.isMessage, timeout: .milliseconds(300))
        #expect(unknownStillEarly == nil)

        // The device that reported no zone counts as in the schedule's (the app's, UTC).
        clock.set(nine.instant(in: utc).addingTimeInterval(0.2))
        let unknownGot = try await unknown.next(where: \.isMessage)
        #expect(unknownGot?.message?.content == "breakfast")
        for reader in [tokyo, berlin] {
            let again = try await reader.next(where: \.isMessage, timeout: .milliseconds(200))
            #expect(again == nil, "a second copy")
        }
    }
}

/// The schedulers' clock in these tests: the wall clock until the test sets it, then the
/// instant it was set to (it stands still).
final class ScheduleClock: Sendable {
    private let fixed = NIOLockedValueBox<Date?>(nil)

    var now: Date { fixed.withLockedValue { $0 } ?? Date() }

    func set(_ instant: Date) {
        fixed.withLockedValue { $0 = instant }
    }
}

/// Polls an async condition every 20 ms for up to `timeout`.
func waitUntilAsync(_ what: String, timeout: Duration = .seconds(10), _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw TestFailure("waited \(timeout) for \(what)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}
