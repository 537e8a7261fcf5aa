/// The schedule API's answers, as heraldctl reads them.
struct ScheduleSummary: Decodable {
    struct Trigger: Decodable {
        struct Single: Decodable { var time: String }
        struct Periodical: Decodable {
            var start: String
            var end: String
            var time: String
            var timeUnit: String
            var frequency: Int
            var point: [String]?

            enum CodingKeys: String, CodingKey {
                case start, end, time, frequency, point
                case timeUnit = "time_unit"
            }
        }

        var single: Single?
        var periodical: Periodical?
    }

    var scheduleID: String
    var name: String
    var enabled: Bool
    var trigger: Trigger
    var timeZone: String?
    var localTime: Bool?
    var nextFireAt: String?

    enum CodingKeys: String, CodingKey {
        case name, enabled, trigger
        case scheduleID = "schedule_id"
        case timeZone = "time_zone"
        case localTime = "local_time"
        case nextFireAt = "next_fire_at"
    }

    /// `at 2026-12-01 09:00:00`, `every 2 weeks on MON, FRI at 09:00:00 (… to …)`, with
    /// `, local time` for a local-time schedule.
    var when: String {
        var text: String
        if let single = trigger.single {
            text = "at \(single.time)"
        } else if let periodical = trigger.periodical {
            let unit = periodical.frequency == 1 ? periodical.timeUnit : "\(periodical.frequency) \(periodical.timeUnit)s"
            let points = periodical.point.map { $0.isEmpty ? "" : " on \($0.joined(separator: ", "))" } ?? ""
            text = "every \(unit)\(points) at \(periodical.time) (\(periodical.start) to \(periodical.end))"
        } else {
            text = "?"
        }
        if localTime == true { text += ", local time" }
        return text
    }
}

struct ScheduleList: Decodable {
    var totalCount: Int
    var totalPages: Int
    var page: Int
    var schedules: [ScheduleSummary]

    enum CodingKeys: String, CodingKey {
        case page, schedules
        case totalCount = "total_count"
        case totalPages = "total_pages"
    }
}

struct ScheduleRuns: Decodable {
    struct Run: Decodable {
        var occurrence: String
        var state: String
        var msgID: String?
        var timeZone: String?

        enum CodingKeys: String, CodingKey {
            case occurrence, state
            case msgID = "msg_id"
            case timeZone = "time_zone"
        }
    }

    var runs: [Run]
}
