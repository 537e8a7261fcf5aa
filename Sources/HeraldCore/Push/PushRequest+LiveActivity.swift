extension PushRequest {
    /// The Live Activity push, checked against the rest of the request, with the audience
    /// narrowed to the devices holding the token it goes to: a start to the push-to-start
    /// tokens of its attributes type (on the devices the usual audience names), an update
    /// or end to the tokens of the activity `audience.live_activity_id` names.
    func validatedLiveActivity(_ audience: inout ValidatedAudience) throws(HeraldError) -> LiveActivityPush? {
        guard let liveActivity else {
            if audience.liveActivity != nil {
                throw .invalidField("audience.live_activity_id", "is only for a push with live_activity")
            }
            return nil
        }
        if notification != nil || message != nil {
            throw .invalidField("live_activity", "a Live Activity push carries no notification or message (send them apart)")
        }
        let push = liveActivity.validated
        switch (push.event, audience.liveActivity) {
        case (.start, nil):
            audience.liveActivity = .pushToStart(attributesType: push.attributesType ?? "")
        case (.start, .some):
            throw .invalidField(
                "audience.live_activity_id",
                "a start goes to push-to-start tokens: name the devices by registration_id, alias, tags or \"all\""
            )
        case (.update, nil), (.end, nil):
            throw .missingField("audience.live_activity_id", "an \(push.event.rawValue) goes to the activity's tokens: name the activity")
        case (.update, .some), (.end, .some):
            let others = [audience.registrationIDs, audience.aliases, audience.tags, audience.tagsAnd, audience.tagsNot]
            if others.contains(where: { $0 != nil }) {
                throw .invalidField("audience", "live_activity_id is the whole audience of an update or end")
            }
        }
        if let platforms = audience.platforms, !platforms.contains(where: { Platform(rawValue: $0)?.usesAPNs == true }) {
            throw .invalidField("platform", "a Live Activity push is for iOS devices")
        }
        return push
    }

    static func liveActivityID(_ value: String) throws(HeraldError) -> String {
        if value.isEmpty || value.utf8.count > PushLimits.maxLiveActivityIDBytes {
            throw .invalidField("audience.live_activity_id", "must be 1 to \(PushLimits.maxLiveActivityIDBytes) bytes")
        }
        if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw .invalidField("audience.live_activity_id", "must not contain control characters")
        }
        return value
    }
}

extension PushRendering {
    /// The APNs payload of a Live Activity push, as Apple documents it: `aps` with
    /// `timestamp` (when the push was made, epoch seconds: the device ignores one older than
    /// what it shows), `event`, `content-state`, the attributes for a start, and the
    /// optional alert, dates and relevance score. The message's ids ride beside `aps`.
    public static func liveActivityPayload(_ push: LiveActivityPush, timestamp: Int64, msgID: String) -> [UInt8] {
        var writer = JSONObjectWriter()
        writer.object("aps") { aps in
            aps.field("timestamp", Int(timestamp))
            aps.field("event", push.event.rawValue)
            aps.field("content-state", push.contentState)
            if push.event == .start {
                aps.field("attributes-type", push.attributesType)
                aps.field("attributes", push.attributes)
            }
            aps.field("alert", push.alert)
            aps.field("stale-date", push.staleDate.map(Int.init))
            aps.field("dismissal-date", push.dismissalDate.map(Int.init))
            aps.field("relevance-score", push.relevanceScore.map(Int.init))
        }
        writer.object("herald") { herald in herald.field("msg_id", msgID) }
        return writer.finish()
    }
}
