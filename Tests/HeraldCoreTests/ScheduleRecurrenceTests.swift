import Foundation
import HeraldCore
import Testing

/// The recurrence of schedule triggers, on wall times, and their instants in a zone.
@Suite struct ScheduleRecurrenceTests {
    static func at(_ text: String) -> LocalDateTime { LocalDateTime(parsing: text)! }

    static func periodical(
        _ start: String,
        _ end: String,
        time: String,
        _ unit: PeriodicalTrigger.Unit,
        frequency: Int = 1,
        points: [Int] = []
    ) -> ScheduleTrigger {
        .periodical(
            PeriodicalTrigger(start: at(start), end: at(end), time: TimeOfDay(parsing: time)!, unit: unit, frequency: frequency, points: points)
        )
    }

    /// The first `count` occurrences after `from`.
    static func occurrences(_ trigger: ScheduleTrigger, after from: String, count: Int = 10) -> [String] {
        var result: [String] = []
        var cursor = at(from)
        while result.count < count, let next = trigger.next(after: cursor) {
            result.append(next.description)
            cursor = next
        }
        return result
    }

    @Test func wallTimesParseOnlyInJPushsExactFormat() {
        #expect(LocalDateTime(parsing: "2026-12-01 09:00:00")?.description == "2026-12-01 09:00:00")
        for bad in ["2026-2-01 09:00:00", "2026-12-01 09:00", "2026-12-01T09:00:00", "2026-02-30 09:00:00", "2026-12-01 24:00:00", "x"] {
            #expect(LocalDateTime(parsing: bad) == nil, "\(bad)")
        }
        #expect(LocalDateTime(parsing: "2028-02-29 00:00:00") != nil)
        #expect(LocalDateTime(parsing: "2027-02-29 00:00:00") == nil)
        #expect(Self.at("2026-12-01 09:00:00").weekday == 1)  // a Tuesday
        #expect(LocalDateTime(dayNumber: Self.at("2024-03-01 00:00:00").dayNumber - 1, time: TimeOfDay(hour: 0, minute: 0, second: 0)).day == 29)
    }

    @Test func aSingleTriggerFiresOnceAtItsTime() {
        let trigger = ScheduleTrigger.single(Self.at("2026-12-01 09:00:00"))
        #expect(Self.occurrences(trigger, after: "2026-11-30 00:00:00") == ["2026-12-01 09:00:00"])
        #expect(trigger.next(after: Self.at("2026-12-01 09:00:00")) == nil)
    }

    @Test func dailyEveryNDaysCountsFromStartsDateAndStopsAtEnd() {
        let daily = Self.periodical("2026-01-01 10:00:00", "2026-01-05 09:00:00", time: "09:00:00", .day)
        // 09:00 on the 1st is before start: the first is the 2nd; the 5th at 09:00 is the end.
        #expect(
            Self.occurrences(daily, after: "2025-12-01 00:00:00")
                == ["2026-01-02 09:00:00", "2026-01-03 09:00:00", "2026-01-04 09:00:00", "2026-01-05 09:00:00"]
        )
        let everyThird = Self.periodical("2026-01-01 08:00:00", "2026-01-20 00:00:00", time: "09:00:00", .day, frequency: 3)
        #expect(
            Self.occurrences(everyThird, after: "2026-01-05 00:00:00")
                == ["2026-01-07 09:00:00", "2026-01-10 09:00:00", "2026-01-13 09:00:00", "2026-01-16 09:00:00", "2026-01-19 09:00:00"]
        )
    }

    @Test func weeklyFiresOnItsWeekdaysEveryNWeeks() {
        // 2026-01-01 is a Thursday; its week starts Monday 2025-12-29.
        let trigger = Self.periodical("2026-01-01 00:00:00", "2026-02-28 00:00:00", time: "12:00:00", .week, frequency: 2, points: [2, 4])
        #expect(
            Self.occurrences(trigger, after: "2025-12-01 00:00:00", count: 5)
                == ["2026-01-02 12:00:00", "2026-01-14 12:00:00", "2026-01-16 12:00:00", "2026-01-28 12:00:00", "2026-01-30 12:00:00"]
        )
    }

    @Test func monthlySkipsDaysAMonthDoesNotHave() {
        let trigger = Self.periodical("2026-01-01 00:00:00", "2026-12-31 23:59:59", time: "08:30:00", .month, points: [30, 31])
        #expect(
            Self.occurrences(trigger, after: "2026-01-15 00:00:00", count: 6)
                == [
                    "2026-01-30 08:30:00", "2026-01-31 08:30:00",
                    // February has neither: skipped, as JPush does.
                    "2026-03-30 08:30:00", "2026-03-31 08:30:00",
                    "2026-04-30 08:30:00",
                    "2026-05-30 08:30:00",
                ]
        )
        let leap = Self.periodical("2028-01-01 00:00:00", "2028-12-31 00:00:00", time: "00:00:00", .month, frequency: 12, points: [29])
        #expect(Self.occurrences(leap, after: "2028-01-01 00:00:00") == ["2028-01-29 00:00:00"])
        let neverExists = Self.periodical("2026-02-01 00:00:00", "2026-12-31 00:00:00", time: "00:00:00", .month, frequency: 12, points: [30])
        #expect(neverExists.next(after: Self.at("2026-01-01 00:00:00")) == nil)
    }

    @Test func aWallTimeInADaylightSavingGapFiresAfterTheGapAndARepeatedOneOnce() throws {
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        // 2026-03-08 02:30 doesn't exist in New York (02:00 → 03:00): it fires at 03:30 EDT.
        let gap = Self.at("2026-03-08 02:30:00").instant(in: newYork)
        #expect(gap == Date(timeIntervalSince1970: Double(Self.at("2026-03-08 07:30:00").secondsAsUTC)))
        // 2026-11-01 01:30 happens twice (EDT, then EST): the first.
        let repeated = Self.at("2026-11-01 01:30:00").instant(in: newYork)
        #expect(repeated == Date(timeIntervalSince1970: Double(Self.at("2026-11-01 05:30:00").secondsAsUTC)))
        // A daily 09:00 stays 09:00 local across the change: 14:00 UTC before, 13:00 after.
        let daily = Self.periodical("2026-03-07 00:00:00", "2026-03-10 00:00:00", time: "09:00:00", .day)
        let instants = Self.occurrences(daily, after: "2026-03-06 00:00:00").map { LocalDateTime(Self.at($0).instant(in: newYork), in: .gmt) }
        #expect(instants.map(\.description) == ["2026-03-07 14:00:00", "2026-03-08 13:00:00", "2026-03-09 13:00:00"])
        #expect(LocalDateTime(gap, in: newYork).description == "2026-03-08 03:30:00")
    }

    @Test func anOccurrenceDueLateFiresWithinGraceAndIsMissedBeyond() throws {
        let utc = try #require(TimeZone(identifier: "UTC"))
        let daily = Self.periodical("2026-01-01 00:00:00", "2026-02-01 00:00:00", time: "09:00:00", .day)
        let due = Self.at("2026-01-10 09:00:00").instant(in: utc)
        let onTime = ScheduleEvaluation(
            trigger: daily,
            zone: utc,
            localTime: false,
            evaluatedUntil: due.addingTimeInterval(-60),
            now: due.addingTimeInterval(30),
            grace: 3600
        )
        #expect(onTime.runs.map(\.fires) == [true])
        #expect(onTime.nextFireAt == Self.at("2026-01-11 09:00:00").instant(in: utc))
        // Down for three days: the two older occurrences are missed, the latest fires.
        let back = ScheduleEvaluation(
            trigger: daily,
            zone: utc,
            localTime: false,
            evaluatedUntil: due.addingTimeInterval(-60),
            now: due.addingTimeInterval(2 * 86_400 + 600),
            grace: 3600
        )
        #expect(back.runs.map(\.fires) == [false, false, true])
        // Beyond the grace: missed too.
        let late = ScheduleEvaluation(
            trigger: daily,
            zone: utc,
            localTime: false,
            evaluatedUntil: due.addingTimeInterval(-60),
            now: due.addingTimeInterval(7200),
            grace: 3600
        )
        #expect(late.runs.map(\.fires) == [false])
        // A single trigger that fired has finished.
        let single = ScheduleEvaluation(
            trigger: .single(Self.at("2026-01-10 09:00:00")),
            zone: utc,
            localTime: false,
            evaluatedUntil: due.addingTimeInterval(-1),
            now: due,
            grace: 60
        )
        #expect(single.runs.count == 1 && single.nextFireAt == nil)
    }

    @Test func aLocalTimeScheduleFiresInEachZoneAtItsWallTime() throws {
        let utc = try #require(TimeZone(identifier: "UTC"))
        let tokyo = try #require(TimeZone(identifier: "Asia/Tokyo"))
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let trigger = ScheduleTrigger.single(Self.at("2026-06-01 09:00:00"))
        let tokyoDue = Self.at("2026-06-01 00:00:00").instant(in: utc)  // 09:00 JST
        let first = ScheduleEvaluation(
            trigger: trigger,
            zone: utc,
            localTime: true,
            deviceZones: [tokyo, berlin],
            evaluatedUntil: tokyoDue.addingTimeInterval(-1),
            now: tokyoDue.addingTimeInterval(1),
            grace: 60
        )
        #expect(first.runs.map(\.zone) == ["Asia/Tokyo"])
        // Not finished: Berlin (07:00 UTC) and UTC (09:00) are still to come; looked at
        // again within 15 minutes, for zones that appear meanwhile.
        #expect(first.nextFireAt == tokyoDue.addingTimeInterval(1 + ScheduleEvaluation.localTimeRecheck))
        let berlinDue = Self.at("2026-06-01 07:00:00").instant(in: utc)
        let second = ScheduleEvaluation(
            trigger: trigger,
            zone: utc,
            localTime: true,
            deviceZones: [tokyo, berlin],
            evaluatedUntil: tokyoDue.addingTimeInterval(1),
            now: berlinDue,
            grace: 60
        )
        #expect(second.runs.map(\.zone) == ["Europe/Berlin"] && second.runs.allSatisfy(\.fires))
        // Once UTC−12 has passed 09:00 nothing can fire any more.
        let done = ScheduleEvaluation(
            trigger: trigger,
            zone: utc,
            localTime: true,
            evaluatedUntil: berlinDue,
            now: Self.at("2026-06-01 22:00:00").instant(in: utc),
            grace: 60
        )
        #expect(done.nextFireAt == nil && done.runs.map(\.zone) == [utc.identifier] && done.runs.allSatisfy { !$0.fires })
    }

    @Test func triggersDecodeAsJPushWritesThemAndRefuseWithCode8100() throws {
        let json: JSONValue = .object([
            "periodical": .object([
                "start": .string("2026-01-01 00:00:00"), "end": .string("2026-06-01 00:00:00"), "time": .string("12:00:00"),
                "time_unit": .string("WEEK"), "frequency": .int(2), "point": .array([.string("wed"), .string("FRI")]),
            ])
        ])
        let trigger = try ScheduleTrigger(json: json)
        guard case .periodical(let periodical) = trigger else {
            Issue.record("not periodical")
            return
        }
        #expect(periodical.unit == .week && periodical.points == [2, 4] && periodical.frequency == 2)
        #expect(try ScheduleTrigger(json: trigger.json) == trigger)
        let bad: [JSONValue] = [
            .object([:]),
            .object(["single": .object(["time": .string("2026-1-01 00:00:00")])]),
            .object(["single": .object(["time": .string("2026-01-01 00:00:00")]), "periodical": .object([:])]),
            .object([
                "periodical": .object([
                    "start": .string("2026-01-01 00:00:00"), "end": .string("2026-06-01 00:00:00"), "time": .string("12:00:00"),
                    "time_unit": .string("day"), "frequency": .int(1), "point": .array([.string("MON")]),
                ])
            ]),
            .object([
                "periodical": .object([
                    "start": .string("2026-01-01 00:00:00"), "end": .string("2026-06-01 00:00:00"), "time": .string("12:00:00"),
                    "time_unit": .string("month"), "frequency": .int(1), "point": .array([.string("32")]),
                ])
            ]),
            .object([
                "periodical": .object([
                    "start": .string("2026-01-01 00:00:00"), "end": .string("2026-06-01 00:00:00"), "time": .string("12:00:00"),
                    "time_unit": .string("hour"), "frequency": .int(1),
                ])
            ]),
            .object([
                "periodical": .object([
                    "start": .string("2026-01-01 00:00:00"), "end": .string("2026-06-01 00:00:00"), "time": .string("12:00:00"),
                    "time_unit": .string("day"), "frequency": .int(101),
                ])
            ]),
            .object([
                "periodical": .object([
                    "start": .string("2026-06-01 00:00:00"), "end": .string("2026-01-01 00:00:00"), "time": .string("12:00:00"),
                    "time_unit": .string("day"), "frequency": .int(1),
                ])
            ]),
        ]
        for value in bad {
            #expect(throws: HeraldError.self) { try ScheduleTrigger(json: value) }
            do { _ = try ScheduleTrigger(json: value) } catch { #expect(error.code == .invalidSchedule) }
        }
    }
}
