extension PushRequest {
    /// Checks every value and limit; the error names the field.
    public func validated() throws(HeraldError) -> Push {
        let audience = try validate(audience)
        if notification == nil && message == nil {
            throw .missingField("notification", "a push needs a notification, a message or both")
        }
        if let notification { try validate(notification) }
        if let message { try validate(message) }
        let options = options ?? PushOptions()
        let timeToLive = options.timeToLive ?? PushLimits.defaultTimeToLive
        guard (0...PushLimits.maxTimeToLive).contains(timeToLive) else {
            throw .invalidField("options.time_to_live", "must be 0 to \(PushLimits.maxTimeToLive) seconds")
        }
        let identifier = try options.identifier.map { value throws(HeraldError) in try Self.identifier(value, field: "options.identifier") }
        let replace = try options.replace.map { value throws(HeraldError) in try Self.identifier(value, field: "options.replace") }
        if let replace {
            if let identifier, identifier != replace {
                throw .invalidField("options.identifier", "must be omitted or equal options.replace")
            }
            if notification == nil { throw .invalidField("options.replace", "only a notification can replace another") }
        }
        if let priority = options.priority, ![1, 5, 10].contains(priority) {
            throw .invalidField("options.priority", "must be 10, 5 or 1")
        }
        let cid = try cid.map { value throws(HeraldError) in
            if value.isEmpty || value.utf8.count > PushLimits.maxCIDBytes {
                throw HeraldError.invalidField("cid", "must be 1 to \(PushLimits.maxCIDBytes) bytes")
            }
            if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                throw HeraldError.invalidField("cid", "must not contain control characters")
            }
            return value
        }
        let push = Push(
            audience: audience,
            notification: notification,
            message: message,
            timeToLive: timeToLive,
            identifier: identifier,
            replace: replace,
            apnsProduction: options.apnsProduction,
            priority: options.priority,
            cid: cid
        )
        try Self.checkAPNsPayloadSize(push)
        return push
    }

    /// Refuses a notification whose APNs payload would be over Apple's limit, rendered as
    /// the center renders it, with the largest message id and badge it can carry: APNs
    /// would refuse every copy (PayloadTooLarge), so nothing is accepted.
    private static func checkAPNsPayloadSize(_ push: Push) throws(HeraldError) {
        guard push.notification != nil else { return }
        let limit = push.pushType == .voip ? PushLimits.maxAPNsVoIPPayloadBytes : PushLimits.maxAPNsPayloadBytes
        // Most pushes are far below the limit even with every byte escaped: no rendering.
        guard PushRendering.apnsPayloadQuickBound(push) > limit else { return }
        let size = PushRendering.apnsPayloadSizeBound(push)
        guard size > limit else { return }
        throw .tooLarge(
            "notification",
            "the APNs payload would be \(size) bytes, \(size - limit) over APNs' limit of \(limit) bytes for \(push.pushType.rawValue) pushes; shorten the alert or the extras"
        )
    }

    private func validate(_ audience: PushAudience) throws(HeraldError) -> ValidatedAudience {
        guard case .filter(let filter) = audience else { return .everyone }
        func list(_ values: [String]?, field: String, max: Int) throws(HeraldError) -> [String]? {
            guard let values else { return nil }
            if values.isEmpty { throw .invalidField(field, "must not be empty") }
            return try Validation.labels(values, field: field, max: max)
        }
        var result = ValidatedAudience()
        if let ids = filter.registrationID {
            if ids.isEmpty { throw .invalidField("audience.registration_id", "must not be empty") }
            result.registrationIDs = try Validation.registrationIDs(ids, field: "audience.registration_id", max: PushLimits.maxAudienceIDs)
        }
        result.aliases = try list(filter.alias, field: "audience.alias", max: PushLimits.maxAudienceIDs)
        result.tags = try list(filter.tag, field: "audience.tag", max: PushLimits.maxAudienceTags)
        result.tagsAnd = try list(filter.tagAnd, field: "audience.tag_and", max: PushLimits.maxAudienceTags)
        result.tagsNot = try list(filter.tagNot, field: "audience.tag_not", max: PushLimits.maxAudienceTags)
        if result.registrationIDs == nil && result.aliases == nil && result.tags == nil && result.tagsAnd == nil {
            if result.tagsNot != nil {
                throw .invalidField("audience", "tag_not needs registration_id, alias, tag or tag_and beside it (or use \"all\")")
            }
            throw .invalidField("audience", "expected \"all\" or at least one of registration_id, alias, tag, tag_and")
        }
        return result
    }

    private func validate(_ notification: PushNotification) throws(HeraldError) {
        if let alert = notification.alert, alert.utf8.count > 4096 {
            throw .tooLarge("notification.alert", "at most 4096 bytes")
        }
        guard let ios = notification.ios else {
            if notification.alert == nil { throw .missingField("notification", "needs alert or ios") }
            return
        }
        if let level = ios.interruptionLevel, !["passive", "active", "time-sensitive", "critical"].contains(level) {
            throw .invalidField("notification.ios.interruption-level", "must be passive, active, time-sensitive or critical")
        }
        let pushType = ios.pushType ?? (notification.isContentAvailableOnly ? .background : .alert)
        if pushType == .background, ios.alert != nil || ios.sound != nil {
            throw .invalidField("notification.ios.alert", "a background push carries no alert or sound")
        }
        if ios.pushType == .alert, notification.isContentAvailableOnly {
            throw .invalidField(
                "notification.ios.push_type",
                "a notification with only content-available is a background push (APNs requires push type background at priority 5): omit push_type or set it to background"
            )
        }
        if pushType == .alert, ios.alert == nil, notification.alert == nil, ios.badge == nil, ios.sound == nil,
            ios.contentAvailable != true
        {
            throw .invalidField("notification.ios.alert", "an alert push needs an alert, a badge, a sound or content-available")
        }
    }

    private func validate(_ message: InAppMessage) throws(HeraldError) {
        if message.msgContent.isEmpty { throw .invalidField("message.msg_content", "must not be empty") }
        if message.msgContent.utf8.count > PushLimits.maxMessageContentBytes {
            throw .tooLarge("message.msg_content", "at most \(PushLimits.maxMessageContentBytes) bytes")
        }
    }

    static func identifier(_ value: String, field: String) throws(HeraldError) -> String {
        if value.isEmpty || value.utf8.count > PushLimits.maxIdentifierBytes {
            throw .invalidField(field, "must be 1 to \(PushLimits.maxIdentifierBytes) bytes")
        }
        if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw .invalidField(field, "must not contain control characters")
        }
        return value
    }
}

extension Push {
    /// Validates identifiers named in a recall.
    public static func recallIdentifiers(_ values: [String]) throws(HeraldError) -> [String] {
        if values.isEmpty { throw .invalidField("identifiers", "must not be empty") }
        if values.count > PushLimits.maxAudienceIDs {
            throw .limit("identifiers", "at most \(PushLimits.maxAudienceIDs) per request (got \(values.count))")
        }
        var seen = Set<String>()
        var result: [String] = []
        for (index, value) in values.enumerated() {
            let identifier = try PushRequest.identifier(value, field: "identifiers[\(index)]")
            if seen.insert(identifier).inserted { result.append(identifier) }
        }
        return result
    }
}
