/// Reading and writing a trigger in JPush's shape:
/// `{"single": {"time": "YYYY-MM-DD HH:MM:SS"}}` or `{"periodical": {"start", "end",
/// "time": "HH:MM:SS", "time_unit": "day"|"week"|"month", "frequency", "point"}}`.
extension ScheduleTrigger {
    /// Most periods between two occurrences (JPush's limit).
    public static let maxFrequency = 100

    /// The trigger in `value`, checked as JPush checks it: one of `single` and
    /// `periodical`; times complete and real; `time_unit` day, week or month (any case);
    /// `frequency` 1 to 100; `point` absent (or empty) for day, weekdays `MON` to `SUN`
    /// (any case) for week, `01` to `31` for month; `end` after `start`. Whether the times
    /// are in the future is ``ScheduleDefinition``'s check: it knows the zone.
    /// Every error is ``HeraldError/Code/invalidSchedule`` naming the field.
    public init(json value: JSONValue) throws(HeraldError) {
        guard let object = value.object else { throw Self.invalid("trigger", "expected an object with single or periodical") }
        if let unknown = object.keys.sorted().first(where: { !["single", "periodical"].contains($0) }) {
            throw Self.invalid("trigger.\(unknown)", "unknown field (expected single or periodical)")
        }
        switch (object["single"], object["periodical"]) {
        case (let single?, nil):
            let fields = try Self.fields(single, "trigger.single", allowed: ["time"])
            self = .single(try Self.dateTime(fields["time"], "trigger.single.time"))
        case (nil, let periodical?):
            self = .periodical(try Self.periodical(periodical))
        default:
            throw Self.invalid("trigger", "give exactly one of single and periodical")
        }
    }

    private static func periodical(_ value: JSONValue) throws(HeraldError) -> PeriodicalTrigger {
        let path = "trigger.periodical"
        let fields = try fields(value, path, allowed: ["start", "end", "time", "time_unit", "frequency", "point"])
        let start = try dateTime(fields["start"], "\(path).start")
        let end = try dateTime(fields["end"], "\(path).end")
        guard let timeText = fields["time"]?.string, let time = TimeOfDay(parsing: timeText) else {
            throw invalid("\(path).time", "expected \"HH:MM:SS\" on a 24-hour clock")
        }
        guard let unitText = fields["time_unit"]?.string, let unit = PeriodicalTrigger.Unit(rawValue: unitText.lowercased()) else {
            throw invalid("\(path).time_unit", "expected day, week or month")
        }
        let frequency: Int
        switch fields["frequency"] {
        case .int(let number) where (1...Int64(maxFrequency)).contains(number): frequency = Int(number)
        case nil: throw invalid("\(path).frequency", "is required (1 to \(maxFrequency))")
        default: throw invalid("\(path).frequency", "expected a whole number from 1 to \(maxFrequency)")
        }
        let points = try Self.points(fields["point"], unit: unit, "\(path).point")
        guard end > start else { throw invalid("\(path).end", "must be after start") }
        return PeriodicalTrigger(start: start, end: end, time: time, unit: unit, frequency: frequency, points: points)
    }

    /// Weekday names as JPush writes them, Monday first.
    public static let weekdays = ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"]

    private static func points(_ value: JSONValue?, unit: PeriodicalTrigger.Unit, _ path: String) throws(HeraldError) -> [Int] {
        var names: [String] = []
        switch value {
        case nil, .null: break
        case .array(let values):
            for (index, value) in values.enumerated() {
                guard let name = value.string else { throw invalid("\(path)[\(index)]", "expected a string") }
                names.append(name)
            }
        default: throw invalid(path, "expected a list")
        }
        switch unit {
        case .day:
            guard names.isEmpty else { throw invalid(path, "must be absent when time_unit is day") }
            return []
        case .week:
            guard !names.isEmpty else { throw invalid(path, "name at least one weekday (MON to SUN)") }
            var days: [Int] = []
            for (index, name) in names.enumerated() {
                guard let day = weekdays.firstIndex(of: name.uppercased()) else {
                    throw invalid("\(path)[\(index)]", "expected a weekday MON, TUE, WED, THU, FRI, SAT or SUN")
                }
                days.append(day)
            }
            return days
        case .month:
            guard !names.isEmpty else { throw invalid(path, "name at least one day of the month (01 to 31)") }
            var days: [Int] = []
            for (index, name) in names.enumerated() {
                guard name.utf8.count == 2, let day = Int(name), (1...31).contains(day) else {
                    throw invalid("\(path)[\(index)]", "expected a day of the month \"01\" to \"31\"")
                }
                days.append(day)
            }
            return days
        }
    }

    /// The trigger as JPush writes it (normalised: time_unit lowercase, weekdays uppercase,
    /// days of the month two digits).
    public var json: JSONValue {
        switch self {
        case .single(let time):
            return .object(["single": .object(["time": .string(time.description)])])
        case .periodical(let trigger):
            var fields: [String: JSONValue] = [
                "start": .string(trigger.start.description),
                "end": .string(trigger.end.description),
                "time": .string(trigger.time.description),
                "time_unit": .string(trigger.unit.rawValue),
                "frequency": .int(Int64(trigger.frequency)),
            ]
            switch trigger.unit {
            case .day: break
            case .week: fields["point"] = .array(trigger.points.map { .string(Self.weekdays[$0]) })
            case .month: fields["point"] = .array(trigger.points.map { .string(LocalDateTime.pad($0, 2)) })
            }
            return .object(["periodical": .object(fields)])
        }
    }

    private static func fields(_ value: JSONValue, _ path: String, allowed: [String]) throws(HeraldError) -> [String: JSONValue] {
        guard let object = value.object else { throw invalid(path, "expected an object") }
        if let unknown = object.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw invalid("\(path).\(unknown)", "unknown field (expected one of \(allowed.joined(separator: ", ")))")
        }
        return object
    }

    private static func dateTime(_ value: JSONValue?, _ path: String) throws(HeraldError) -> LocalDateTime {
        guard let text = value?.string, let time = LocalDateTime(parsing: text) else {
            throw invalid(path, "expected \"YYYY-MM-DD HH:MM:SS\", a complete date and 24-hour time")
        }
        return time
    }

    static func invalid(_ field: String, _ reason: String) -> HeraldError {
        HeraldError(.invalidSchedule, "\(field): \(reason)")
    }
}
