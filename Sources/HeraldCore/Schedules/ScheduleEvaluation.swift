import Foundation

/// What a scheduler does with a due schedule at `now`: which occurrences fire, which are
/// recorded missed, and when to look at the schedule again (nil: it has finished). Pure:
/// the store runs it inside the transaction that holds the schedule's row.
///
/// The schedule was evaluated last at `evaluatedUntil`; every occurrence due in
/// (`evaluatedUntil`, `now`] is handled now, zone by zone:
/// - the latest of them fires if it is at most `grace` late;
/// - every other one is recorded `missed`: it was due while no scheduler ran (a node was
///   down, or all were), or a later occurrence is due already (at most
///   ``maxMissedRecorded`` of them are recorded per zone and evaluation).
///
/// A schedule in one zone (its own, or its app's) has one zone. A local-time schedule has
/// a zone per time zone its app's devices are in (and its own zone, for devices that
/// report none): an occurrence fires in each zone at the trigger's wall time there. Its
/// zones can change between evaluations (a device in a new zone registers), so it is
/// looked at again at least every ``localTimeRecheck``; it finishes when no zone on Earth
/// can still reach one of its wall times.
public struct ScheduleEvaluation: Sendable, Hashable {
    /// One occurrence in one zone.
    public struct Run: Sendable, Hashable {
        /// The instant it was due.
        public var occurrence: Date
        /// The wall time it was due at, in `zone`.
        public var wallTime: LocalDateTime
        /// The devices' zone, for a local-time schedule; nil otherwise.
        public var zone: String?
        /// True: it fires now. False: it is recorded missed.
        public var fires: Bool
    }

    public var runs: [Run]
    /// When to evaluate the schedule again; nil when it has finished.
    public var nextFireAt: Date?

    /// The zone whose wall time is the earliest on Earth (UTC−12).
    public static let westernmostZone = TimeZone(secondsFromGMT: -12 * 3600)!
    /// How often a local-time schedule is looked at while it may still fire somewhere.
    public static let localTimeRecheck: TimeInterval = 15 * 60
    /// Missed occurrences recorded per zone and evaluation; older ones are skipped unrecorded.
    public static let maxMissedRecorded = 100

    /// - Parameters:
    ///   - zone: the schedule's zone (its own, else its app's).
    ///   - localTime: fire in each of `deviceZones` (and `zone`) at the wall time there.
    ///   - deviceZones: the zones the app's devices reported (local-time only).
    public init(
        trigger: ScheduleTrigger,
        zone: TimeZone,
        localTime: Bool,
        deviceZones: [TimeZone] = [],
        evaluatedUntil: Date,
        now: Date,
        grace: TimeInterval
    ) {
        var zones = [zone]
        if localTime {
            for deviceZone in deviceZones where !zones.contains(where: { $0.identifier == deviceZone.identifier }) {
                zones.append(deviceZone)
            }
        }
        runs = []
        var next: Date?
        for candidate in zones {
            let due = Self.occurrences(of: trigger, in: candidate, after: evaluatedUntil, through: now)
            for (index, (wallTime, instant)) in due.enumerated() {
                let latest = index == due.count - 1
                runs.append(
                    Run(
                        occurrence: instant,
                        wallTime: wallTime,
                        zone: localTime ? candidate.identifier : nil,
                        fires: latest && now.timeIntervalSince(instant) <= grace
                    )
                )
            }
            if let upcoming = Self.firstOccurrence(of: trigger, in: candidate, after: now) {
                next = min(next ?? upcoming, upcoming)
            }
        }
        if localTime {
            let earliestWallTime = LocalDateTime(secondsAsUTC: LocalDateTime(now, in: Self.westernmostZone).secondsAsUTC - 3600)
            let finished = trigger.next(after: earliestWallTime) == nil
            nextFireAt = finished ? nil : min(next ?? .distantFuture, now.addingTimeInterval(Self.localTimeRecheck))
        } else {
            nextFireAt = next
        }
    }

    /// The occurrences due in (`after`, `through`] in `zone`, oldest first: at most
    /// ``maxMissedRecorded`` plus the latest.
    static func occurrences(of trigger: ScheduleTrigger, in zone: TimeZone, after: Date, through: Date) -> [(LocalDateTime, Date)] {
        // Two hours back: a wall time in a daylight-saving gap fires after the gap.
        var wallTime = LocalDateTime(secondsAsUTC: LocalDateTime(after, in: zone).secondsAsUTC - 7200)
        var due: [(LocalDateTime, Date)] = []
        while let next = trigger.next(after: wallTime) {
            let instant = next.instant(in: zone)
            if instant > through { break }
            if instant > after {
                due.append((next, instant))
                if due.count > maxMissedRecorded + 1 { due.removeFirst() }
            }
            wallTime = next
        }
        return due
    }

    /// The first occurrence after `instant` in `zone`.
    public static func firstOccurrence(of trigger: ScheduleTrigger, in zone: TimeZone, after instant: Date) -> Date? {
        var wallTime = LocalDateTime(secondsAsUTC: LocalDateTime(instant, in: zone).secondsAsUTC - 7200)
        while let next = trigger.next(after: wallTime) {
            let occurrence = next.instant(in: zone)
            if occurrence > instant { return occurrence }
            wallTime = next
        }
        return nil
    }
}
