/// A wall-clock date and time with no time zone: what a schedule's trigger names
/// (`"2026-12-01 09:00:00"`). It becomes an instant only in a zone
/// (``instant(in:)``); the recurrence is computed on wall times, so "09:00 every day" stays
/// 09:00 across daylight-saving changes.
///
/// Day arithmetic is done on day numbers (days since 1970-01-01, proleptic Gregorian), with
/// no calendar object: the recurrence is pure and cheap.
public struct LocalDateTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int
    public var time: TimeOfDay

    public init(year: Int, month: Int, day: Int, time: TimeOfDay = TimeOfDay(hour: 0, minute: 0, second: 0)) {
        self.year = year
        self.month = month
        self.day = day
        self.time = time
    }

    /// The date of day number `dayNumber` at `time`.
    public init(dayNumber: Int, time: TimeOfDay) {
        let (year, month, day) = Self.civil(fromDays: dayNumber)
        self.init(year: year, month: month, day: day, time: time)
    }

    /// Days since 1970-01-01.
    public var dayNumber: Int { Self.days(year: year, month: month, day: day) }

    /// 0 for Monday through 6 for Sunday (1970-01-01 was a Thursday).
    public var weekday: Int { ((dayNumber % 7) + 7 + 3) % 7 }

    /// Seconds since 1970-01-01 00:00:00 of this wall time read as UTC.
    public var secondsAsUTC: Int64 { Int64(dayNumber) * 86_400 + Int64(time.secondOfDay) }

    /// The wall time `seconds` after 1970-01-01 00:00:00 (read as UTC).
    public init(secondsAsUTC seconds: Int64) {
        let days = Int(seconds.floorDivided(by: 86_400))
        let rest = Int(seconds - Int64(days) * 86_400)
        self.init(dayNumber: days, time: TimeOfDay(secondOfDay: rest))
    }

    /// `YYYY-MM-DD HH:MM:SS`, JPush's format.
    public var description: String {
        "\(Self.pad(year, 4))-\(Self.pad(month, 2))-\(Self.pad(day, 2)) \(time)"
    }

    /// Parses exactly `YYYY-MM-DD HH:MM:SS` (every digit present, 24-hour clock), a date
    /// that exists; nil otherwise.
    public init?(parsing text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 19, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: " "),
            let year = Self.number(bytes[0..<4]), let month = Self.number(bytes[5..<7]), let day = Self.number(bytes[8..<10]),
            let time = TimeOfDay(parsing: String(decoding: bytes[11...], as: UTF8.self)),
            (1...12).contains(month), (1...Self.daysIn(year: year, month: month)).contains(day), year >= 1970
        else { return nil }
        self.init(year: year, month: month, day: day, time: time)
    }

    public static func < (lhs: LocalDateTime, rhs: LocalDateTime) -> Bool {
        (lhs.year, lhs.month, lhs.day, lhs.time.secondOfDay) < (rhs.year, rhs.month, rhs.day, rhs.time.secondOfDay)
    }

    /// Days in a month of a year (February 29 in leap years).
    public static func daysIn(year: Int, month: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a civil date (Howard Hinnant's `days_from_civil`).
    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day number (`civil_from_days`).
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for byte in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}

/// A time of day, `HH:MM:SS` on a 24-hour clock.
public struct TimeOfDay: Sendable, Hashable, CustomStringConvertible {
    public var hour: Int
    public var minute: Int
    public var second: Int

    public init(hour: Int, minute: Int, second: Int) {
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    init(secondOfDay: Int) {
        self.init(hour: secondOfDay / 3600, minute: secondOfDay / 60 % 60, second: secondOfDay % 60)
    }

    public var secondOfDay: Int { hour * 3600 + minute * 60 + second }

    /// Parses exactly `HH:MM:SS` (00:00:00 to 23:59:59); nil otherwise.
    public init?(parsing text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 8, bytes[2] == UInt8(ascii: ":"), bytes[5] == UInt8(ascii: ":"),
            let hour = LocalDateTime.number(bytes[0..<2]), let minute = LocalDateTime.number(bytes[3..<5]),
            let second = LocalDateTime.number(bytes[6..<8]), hour < 24, minute < 60, second < 60
        else { return nil }
        self.init(hour: hour, minute: minute, second: second)
    }

    public var description: String {
        "\(LocalDateTime.pad(hour, 2)):\(LocalDateTime.pad(minute, 2)):\(LocalDateTime.pad(second, 2))"
    }
}

extension Int64 {
    func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
