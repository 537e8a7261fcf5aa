import Foundation
import HeraldCore
import HeraldStore

extension ScheduleRecord {
    /// The schedule as JPush answers it (`schedule_id`, `name`, `enabled`, `trigger`,
    /// `push`), with Herald's `time_zone` (its own zone, null for the app's), `local_time`
    /// and `next_fire_at` (when a scheduler looks at it next).
    var json: JSONValue {
        let push = (try? JSONDecoder().decode(JSONValue.self, from: Data(pushJSON.utf8))) ?? .object([:])
        return .object([
            "schedule_id": .string(scheduleID),
            "name": .string(definition.name),
            "enabled": .bool(definition.enabled),
            "trigger": definition.trigger.json,
            "push": push,
            "time_zone": definition.timeZone.map(JSONValue.string) ?? .null,
            "local_time": .bool(definition.localTime),
            "next_fire_at": nextFireAt.map { .string(Self.iso8601($0)) } ?? .null,
        ])
    }

    static func iso8601(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}

extension ScheduleRun {
    /// One entry of JPush's `msgids`: a JSON object written as a string, as JPush answers.
    var jpushMsgID: String {
        let entry: JSONValue = .object([
            "msg_id": .string(msgID ?? "0"),
            "error": .object(["code": .int(Int64(error?.code.rawValue ?? 0)), "message": .string(error?.message ?? "")]),
            "needRetry": .bool(false),
        ])
        return String(decoding: entry.bytes, as: UTF8.self)
    }

    /// One entry of Herald's `runs`.
    var json: JSONValue {
        var fields: [String: JSONValue] = [
            "occurrence": .string(ScheduleRecord.iso8601(occurrence)),
            "state": .string(state.rawValue),
            "fired_at": .string(ScheduleRecord.iso8601(firedAt)),
            "msg_id": msgID.map(JSONValue.string) ?? .null,
            "time_zone": timeZone.map(JSONValue.string) ?? .null,
        ]
        if let error {
            fields["error"] = .object(["code": .int(Int64(error.code.rawValue)), "message": .string(error.message)])
        }
        return .object(fields)
    }
}
