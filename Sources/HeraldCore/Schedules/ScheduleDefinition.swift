import Foundation

/// A schedule as an operator defines it (`POST /v3/schedules`): JPush's `name`, `enabled`,
/// `trigger` and `push`, and Herald's `time_zone` (the zone of its times; nil: the app's)
/// and `local_time` (fire at the trigger's wall time in each device's own zone).
public struct ScheduleDefinition: Sendable, Hashable {
    public var name: String
    public var enabled: Bool
    public var trigger: ScheduleTrigger
    /// The push as given, without a cid (JPush ignores a cid inside a schedule's push).
    public var push: PushRequest
    /// An IANA zone name; nil: the app's zone.
    public var timeZone: String?
    public var localTime: Bool

    public init(name: String, enabled: Bool, trigger: ScheduleTrigger, push: PushRequest, timeZone: String? = nil, localTime: Bool = false) {
        self.name = name
        self.enabled = enabled
        self.trigger = trigger
        self.push = push
        self.push.cid = nil
        self.timeZone = timeZone
        self.localTime = localTime
    }

    /// Active schedules an app may have (JPush's limit for an ordinary account).
    public static let maxActivePerApp = 100
    /// Bytes in a name (JPush's limit).
    public static let maxNameBytes = 255
    /// How far ahead a single trigger may be, and how long a periodical trigger may last
    /// (JPush: a year).
    public static let maxSpan: TimeInterval = 366 * 86_400

    /// Checks what depends on the clock and the zone: the trigger must still have an
    /// occurrence after `now` (for a local-time schedule, in some zone of the world), a
    /// single time at most a year ahead, a periodical trigger spanning at most a year.
    /// A disabled schedule is checked the same way: enabling it must be able to fire.
    public func checkTiming(now: Date, zone: TimeZone) throws(HeraldError) {
        let earliestWallTime = localTime ? LocalDateTime(now, in: ScheduleEvaluation.westernmostZone) : LocalDateTime(now, in: zone)
        switch trigger {
        case .single(let time):
            guard time > earliestWallTime else {
                throw HeraldError(.invalidSchedule, "trigger.single.time: \(time) has passed in \(localTime ? "every time zone" : zone.identifier)")
            }
            guard time.instant(in: zone).timeIntervalSince(now) <= Self.maxSpan else {
                throw HeraldError(.invalidSchedule, "trigger.single.time: at most a year ahead")
            }
        case .periodical(let periodical):
            guard Double(periodical.end.secondsAsUTC - periodical.start.secondsAsUTC) <= Self.maxSpan else {
                throw HeraldError(.invalidSchedule, "trigger.periodical.end: at most a year after start")
            }
            guard trigger.next(after: earliestWallTime) != nil else {
                throw HeraldError(
                    .invalidSchedule,
                    "trigger.periodical: no occurrence is left between now (\(earliestWallTime)) and end (\(periodical.end))"
                )
            }
        }
    }

    /// A name as JPush allows it: 1 to 255 bytes of letters (any script), digits and
    /// underscores.
    public static func validName(_ name: String) throws(HeraldError) -> String {
        guard !name.isEmpty, name.utf8.count <= maxNameBytes else {
            throw HeraldError(.invalidSchedule, "name: 1 to \(maxNameBytes) bytes")
        }
        let allowed = name.unicodeScalars.allSatisfy { scalar in
            scalar == "_" || scalar.properties.isAlphabetic || scalar.properties.numericType == .decimal
        }
        guard allowed else { throw HeraldError(.invalidSchedule, "name: only letters, digits and underscores") }
        return name
    }
}
