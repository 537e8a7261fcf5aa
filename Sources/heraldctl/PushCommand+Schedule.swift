import ArgumentParser
import Foundation

/// `heraldctl push --at` and `--every`: the push goes into a schedule (`POST
/// /v3/schedules`) instead of out now.
extension PushCommand {
    enum ScheduleUnit: String, ExpressibleByArgument, CaseIterable {
        case day, week, month
    }

    static let weekdays = ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"]

    var isScheduled: Bool { at != nil || every != nil }

    func validateSchedule() throws {
        let periodic: [(String, Bool)] = [
            ("--time", time != nil), ("--point", !points.isEmpty), ("--frequency", frequency != nil), ("--start", start != nil),
            ("--end", end != nil),
        ]
        guard isScheduled else {
            let given = (periodic + [("--local-time", localTime), ("--time-zone", timeZone != nil), ("--schedule-name", scheduleName != nil)])
                .filter(\.1).map(\.0)
            if !given.isEmpty { throw ValidationError("\(given.joined(separator: ", ")) go with --at or --every.") }
            return
        }
        if at != nil, every != nil { throw ValidationError("--at sends once and --every again and again: choose one.") }
        if dryRun || wait { throw ValidationError("--dry-run and --wait are for a push sent now, not with --at or --every.") }
        if let at {
            if !Self.isWallTime(at) { throw ValidationError("--at must be \"YYYY-MM-DD HH:MM:SS\"; got '\(at)'.") }
            let given = periodic.filter(\.1).map(\.0)
            if !given.isEmpty { throw ValidationError("\(given.joined(separator: ", ")) go with --every.") }
        }
        if let every {
            guard let time, time.count == 8, time.split(separator: ":").count == 3 else {
                throw ValidationError("--every needs --time HH:MM:SS.")
            }
            for (flag, value) in [("--start", start), ("--end", end)] {
                if let value, !Self.isWallTime(value) { throw ValidationError("\(flag) must be \"YYYY-MM-DD HH:MM:SS\"; got '\(value)'.") }
            }
            if let frequency, !(1...100).contains(frequency) { throw ValidationError("--frequency must be 1 to 100.") }
            switch every {
            case .day where !points.isEmpty: throw ValidationError("--point goes with --every week or month.")
            case .week where points.isEmpty || points.contains { !Self.weekdays.contains($0.uppercased()) }:
                throw ValidationError("--every week needs --point MON..SUN (repeatable).")
            case .month where points.isEmpty || points.contains { Int($0).map { !(1...31).contains($0) } ?? true }:
                throw ValidationError("--every month needs --point 01..31 (repeatable).")
            default: break
            }
        }
    }

    /// The schedule's body: its name, trigger and Herald's fields around the push.
    func scheduleBody(push: Data) throws(CLIError) -> Data {
        guard let pushObject = try? JSONSerialization.jsonObject(with: push) as? [String: Any] else {
            throw .usage("the push body must be a JSON object")
        }
        var pushFields = pushObject
        let cid = pushFields.removeValue(forKey: "cid")
        var trigger: [String: Any]
        if let at {
            trigger = ["single": ["time": at]]
        } else {
            let start = start ?? Self.today()
            var periodical: [String: Any] = [
                "start": start, "end": end ?? Self.yearAfter(start), "time": time ?? "", "time_unit": every?.rawValue ?? "day",
                "frequency": frequency ?? 1,
            ]
            if !points.isEmpty {
                periodical["point"] = every == .month ? points.map { $0.count == 1 ? "0\($0)" : $0 } : points.map { $0.uppercased() }
            }
            trigger = ["periodical": periodical]
        }
        var body: [String: Any] = [
            "name": scheduleName ?? Self.defaultName(at: at, every: every), "enabled": true, "trigger": trigger, "push": pushFields,
        ]
        if let cid { body["cid"] = cid }
        if let timeZone { body["time_zone"] = timeZone }
        if localTime { body["local_time"] = true }
        do {
            return try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes])
        } catch {
            throw .usage("cannot encode the schedule")
        }
    }

    func schedule(push: Data, client: APIClient) async throws {
        let response = try await client.send("POST", "/v3/schedules", body: try scheduleBody(push: push), .app)
        let created = try response.decode(ScheduleCreated.self, url: client.connection.displayURL)
        try output.emit(response) {
            TableRenderer.fields([("schedule_id", created.scheduleID), ("name", TableRenderer.safe(created.name))])
        }
    }

    static func isWallTime(_ text: String) -> Bool {
        text.count == 19 && text.range(of: #"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$"#, options: .regularExpression) != nil
    }

    /// Today at 00:00:00, by UTC's date (before now in any zone but the far east, where it
    /// is at most a day before).
    static func today() -> String {
        String(ISO8601DateFormatter().string(from: Date()).prefix(10)) + " 00:00:00"
    }

    /// The same wall time a year (365 days) later: JPush's longest span.
    static func yearAfter(_ start: String) -> String {
        let formatter = ISO8601DateFormatter()
        guard let date = formatter.date(from: start.replacingOccurrences(of: " ", with: "T") + "Z") else { return start }
        return formatter.string(from: date.addingTimeInterval(365 * 86_400)).replacingOccurrences(of: "T", with: " ").replacingOccurrences(
            of: "Z",
            with: ""
        )
    }

    static func defaultName(at: String?, every: ScheduleUnit?) -> String {
        let stamp = (at ?? "").filter(\.isNumber)
        return at != nil ? "push_at_\(stamp)" : "push_every_\(every?.rawValue ?? "day")"
    }
}

/// `{"schedule_id", "name"}`.
struct ScheduleCreated: Decodable {
    var scheduleID: String
    var name: String

    enum CodingKeys: String, CodingKey {
        case scheduleID = "schedule_id"
        case name
    }
}
