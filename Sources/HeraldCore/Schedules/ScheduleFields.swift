import Foundation

/// The schedule's own sections of a `POST` or `PUT /v3/schedules` body, each checked on its
/// own (the push is decoded apart, as a push's body is). A section absent is nil: a create
/// needs name, enabled, trigger and push; an update replaces what it gives (JPush: a
/// section is replaced whole, never merged).
public struct ScheduleFields: Sendable, Hashable {
    public var cid: String?
    public var name: String?
    public var enabled: Bool?
    public var trigger: ScheduleTrigger?
    /// `.some(nil)`: `"time_zone": null`, back to the app's zone.
    public var timeZone: String??
    public var localTime: Bool?

    /// The keys a schedule body may have.
    public static let keys = ["cid", "name", "enabled", "trigger", "push", "time_zone", "local_time"]

    /// The sections of `body`; with `unknownFields` (a JPush client's body), a key that is
    /// no section and looks like none is ignored and named in the warnings.
    public init(_ body: [String: JSONValue], unknownFields: UnknownFields? = nil) throws(HeraldError) {
        for unknown in body.keys.sorted() where !Self.keys.contains(unknown) {
            guard let unknownFields else {
                throw HeraldError(.invalidSchedule, "\(unknown): unknown field (expected one of \(Self.keys.joined(separator: ", ")))")
            }
            do {
                try unknownFields.ignore(unknown, at: "", known: Self.keys)
            } catch {
                throw HeraldError(.invalidSchedule, error.message)
            }
        }
        // JPush's clients send `"cid": ""` when they have none (a Go client on every create).
        if let value = body["cid"], value != .string("") {
            guard let cid = value.string, !cid.isEmpty, cid.utf8.count <= PushLimits.maxCIDBytes,
                !cid.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else {
                throw HeraldError(.invalidSchedule, "cid: 1 to \(PushLimits.maxCIDBytes) bytes, no control characters")
            }
            self.cid = cid
        }
        if let value = body["name"] {
            guard let name = value.string else { throw HeraldError(.invalidSchedule, "name: expected a string") }
            self.name = try ScheduleDefinition.validName(name)
        }
        if let value = body["enabled"] {
            guard case .bool(let enabled) = value else { throw HeraldError(.invalidSchedule, "enabled: expected true or false") }
            self.enabled = enabled
        }
        if let value = body["trigger"] { trigger = try ScheduleTrigger(json: value) }
        switch body["time_zone"] {
        case nil: break
        case .null?: timeZone = .some(nil)
        case .string(let name)?: timeZone = .some(try Validation.timeZone(name, field: "time_zone", code: .invalidSchedule).identifier)
        default: throw HeraldError(.invalidSchedule, "time_zone: expected an IANA time zone name or null")
        }
        if let value = body["local_time"] {
            guard case .bool(let localTime) = value else { throw HeraldError(.invalidSchedule, "local_time: expected true or false") }
            self.localTime = localTime
        }
    }

    /// A new schedule: every JPush section given, `enabled` true (JPush refuses to create a
    /// disabled schedule).
    public func created(push: PushRequest?) throws(HeraldError) -> ScheduleDefinition {
        guard let name else { throw HeraldError(.invalidSchedule, "name: is required") }
        guard let enabled else { throw HeraldError(.invalidSchedule, "enabled: is required (true)") }
        guard enabled else { throw HeraldError(.invalidSchedule, "enabled: a schedule is created enabled (true)") }
        guard let trigger else { throw HeraldError(.invalidSchedule, "trigger: is required") }
        guard let push else { throw HeraldError(.invalidSchedule, "push: is required") }
        return ScheduleDefinition(
            name: name,
            enabled: enabled,
            trigger: trigger,
            push: push,
            timeZone: timeZone ?? nil,
            localTime: localTime ?? false
        )
    }

    /// `existing` with the sections given replaced. A single trigger stays single and a
    /// periodical one periodical (JPush); a cid is only for creating.
    public func updating(_ existing: ScheduleDefinition, push: PushRequest?) throws(HeraldError) -> ScheduleDefinition {
        guard cid == nil else { throw HeraldError(.invalidSchedule, "cid: only a create takes a cid") }
        guard name != nil || enabled != nil || trigger != nil || push != nil || timeZone != nil || localTime != nil else {
            throw HeraldError(.invalidSchedule, "body: give at least one of name, enabled, trigger, push, time_zone, local_time")
        }
        var updated = existing
        if let name { updated.name = name }
        if let enabled { updated.enabled = enabled }
        if let trigger {
            guard trigger.isSingle == existing.trigger.isSingle else {
                throw HeraldError(.invalidSchedule, "trigger: a single schedule stays single and a periodical one periodical")
            }
            updated.trigger = trigger
        }
        if let push {
            updated.push = push
            updated.push.cid = nil
        }
        if let timeZone { updated.timeZone = timeZone }
        if let localTime { updated.localTime = localTime }
        return updated
    }
}
