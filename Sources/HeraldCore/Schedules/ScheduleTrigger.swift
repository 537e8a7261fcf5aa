/// When a schedule fires, as JPush's Schedule API names it: once (`single`), or again and
/// again (`periodical`). Times are wall times in the schedule's zone (or, for a local-time
/// schedule, in each device's zone).
public enum ScheduleTrigger: Sendable, Hashable {
    case single(LocalDateTime)
    case periodical(PeriodicalTrigger)

    /// The first occurrence strictly after `wallTime`, nil when there is none.
    public func next(after wallTime: LocalDateTime) -> LocalDateTime? {
        switch self {
        case .single(let time): time > wallTime ? time : nil
        case .periodical(let periodical): periodical.next(after: wallTime)
        }
    }

    public var isSingle: Bool {
        if case .single = self { return true }
        return false
    }
}

/// A repeating trigger: every `frequency` days, weeks or months from `start`, at `time`, on
/// the `points` of each period (weekdays of a week, days of a month), until `end`.
///
/// - `day`: the days `start`'s date plus a multiple of `frequency` days.
/// - `week`: the weeks (Monday to Sunday) `start`'s week plus a multiple of `frequency`
///   weeks, on each of `points` (0 Monday to 6 Sunday).
/// - `month`: the months `start`'s month plus a multiple of `frequency` months, on each of
///   `points` (1 to 31); a day the month doesn't have (31 in April, 30 in February) is
///   skipped in that month, as JPush does.
///
/// An occurrence is at `time` on such a day, not before `start` and not after `end`
/// (wall times).
public struct PeriodicalTrigger: Sendable, Hashable {
    public enum Unit: String, Sendable, Hashable, CaseIterable {
        case day, week, month
    }

    public var start: LocalDateTime
    public var end: LocalDateTime
    public var time: TimeOfDay
    public var unit: Unit
    public var frequency: Int
    /// Weekdays (0 Monday to 6 Sunday) or days of the month (1 to 31), sorted, unique;
    /// empty for `day`.
    public var points: [Int]

    public init(start: LocalDateTime, end: LocalDateTime, time: TimeOfDay, unit: Unit, frequency: Int, points: [Int] = []) {
        self.start = start
        self.end = end
        self.time = time
        self.unit = unit
        self.frequency = max(1, frequency)
        self.points = Array(Set(points)).sorted()
    }

    /// The first occurrence strictly after `wallTime`, nil when none is left before `end`.
    public func next(after wallTime: LocalDateTime) -> LocalDateTime? {
        let from = max(wallTime, LocalDateTime(secondsAsUTC: start.secondsAsUTC - 1))
        // Each loop looks at one period; the bound keeps a trigger that can never fire (a
        // monthly 31st every 12 months from a 30-day month) from looping forever.
        switch unit {
        case .day:
            let first = start.dayNumber
            var index = max(0, (from.dayNumber - first) / frequency)
            for _ in 0..<4 {
                let candidate = LocalDateTime(dayNumber: first + index * frequency, time: time)
                if candidate > end { return nil }
                if candidate > from { return candidate }
                index += 1
            }
            return nil
        case .week:
            let firstMonday = start.dayNumber - start.weekday
            var week = max(0, (from.dayNumber - firstMonday) / 7 / frequency)
            for _ in 0..<4 {
                let monday = firstMonday + week * 7 * frequency
                for point in points {
                    let candidate = LocalDateTime(dayNumber: monday + point, time: time)
                    if candidate > end { return nil }
                    if candidate > from { return candidate }
                }
                week += 1
            }
            return nil
        case .month:
            let firstMonth = start.year * 12 + start.month - 1
            var index = max(0, (from.year * 12 + from.month - 1 - firstMonth) / frequency)
            for _ in 0..<400 {
                let month = firstMonth + index * frequency
                let (year, monthOfYear) = (month / 12, month % 12 + 1)
                if LocalDateTime(year: year, month: monthOfYear, day: 1) > end { return nil }
                for point in points where point <= LocalDateTime.daysIn(year: year, month: monthOfYear) {
                    let candidate = LocalDateTime(year: year, month: monthOfYear, day: point, time: time)
                    if candidate > end { return nil }
                    if candidate > from { return candidate }
                }
                index += 1
            }
            return nil
        }
    }
}
