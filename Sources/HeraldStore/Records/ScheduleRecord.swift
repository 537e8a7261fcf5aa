import Foundation
import HeraldCore

/// A schedule as the store holds it.
public struct ScheduleRecord: Sendable, Hashable {
    /// JPush's schedule id: a UUID, lowercase.
    public var scheduleID: String
    public var cid: String?
    public var definition: ScheduleDefinition
    /// The push as stored (``PushRequest/storedJSON``), for answers.
    public var pushJSON: String
    /// Its last occurrence passed: it fires no more, and only its msg_ids are answered.
    public var finished: Bool
    /// When a scheduler looks at it next.
    public var nextFireAt: Date?
    public var createdAt: Date
    public var updatedAt: Date
}

/// What one occurrence of a schedule became (`schedule_runs`).
public struct ScheduleRun: Sendable, Hashable {
    public enum State: String, Sendable, Hashable {
        case sent, missed, failed
    }

    /// The instant it was due.
    public var occurrence: Date
    /// The devices' zone of a local-time schedule's run; nil otherwise.
    public var timeZone: String?
    public var state: State
    public var msgID: String?
    public var error: HeraldError?
    /// When a scheduler handled it.
    public var firedAt: Date
}

/// A page of an app's active schedules.
public struct SchedulePage: Sendable {
    public var total: Int
    public var schedules: [ScheduleRecord]
}
