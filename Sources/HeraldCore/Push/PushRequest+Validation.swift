extension PushRequest {
    /// Checks every value and limit; the error names the field. What Herald accepts without
    /// applying it is named in the push's ``Push/warnings``.
    public func validated() throws(HeraldError) -> Push {
        var warnings: [String] = []
        var audience = try validate(audience)
        audience.platforms = try validatedPlatforms(warnings: &warnings)
        let liveActivity = try validatedLiveActivity(&audience)
        if let liveActivity, liveActivity.event == .start, liveActivity.alert == nil {
            // Apple's start carries an alert (the Lock Screen shows it as the activity appears).
            warnings.append("live_activity.ios.alert: a start without an alert; Apple's start carries one (title and body)")
        }
        if notification == nil && message == nil && liveActivity == nil {
            throw .missingField("notification", "a push needs a notification, a message or both")
        }
        var delivered = notification
        if let notification, try !validate(notification, warnings: &warnings) { delivered = nil }
        if delivered == nil, message == nil, liveActivity == nil {
            // Only parts for channels Herald doesn't have: stored, and for no device.
            audience.platforms = []
        }
        if let message { try validate(message) }
        let options = options ?? PushOptions()
        let timeToLive = options.timeToLive ?? PushLimits.defaultTimeToLive
        guard (0...PushLimits.maxTimeToLive).contains(timeToLive) else {
            throw .invalidField("options.time_to_live", "must be 0 to \(PushLimits.maxTimeToLive) seconds")
        }
        let replace = try options.replace.map { value throws(HeraldError) in try Self.identifier(value, field: "options.replace") }
        let (identifier, collapseID) = try validatedIdentifier(options)
        if options.overrideMsgID?.isEmpty == true { throw .invalidField("options.override_msg_id", "must not be empty") }
        if let replace {
            // A replace made from override_msg_id is named by it.
            let field = options.overrideMsgID == nil ? "options.replace" : "options.override_msg_id"
            if let identifier, identifier != replace {
                throw .invalidField(
                    "options.identifier",
                    "must be omitted or equal the identifier of the notification \(field) replaces (\(replace))"
                )
            }
            if notification == nil { throw .invalidField(field, "only a notification can replace another") }
        }
        if options.overrideMsgID != nil, notification == nil {
            throw .invalidField("options.override_msg_id", "only a notification can replace another")
        }
        if let priority = options.priority, ![1, 5, 10].contains(priority) {
            throw .invalidField("options.priority", "must be 10, 5 or 1")
        }
        try validateUnapplied(options, warnings: &warnings)
        let cid = try cid.map { value throws(HeraldError) in
            if value.isEmpty || value.utf8.count > PushLimits.maxCIDBytes {
                throw HeraldError.invalidField("cid", "must be 1 to \(PushLimits.maxCIDBytes) bytes")
            }
            if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                throw HeraldError.invalidField("cid", "must not contain control characters")
            }
            return value
        }
        for (field, present) in [
            ("inapp_message", inappMessage != nil), ("notification_3rd", notification3rd != nil),
        ] where present {
            warnings.append("\(field): accepted and stored with the message, not applied yet")
        }
        var push = Push(
            audience: audience,
            notification: delivered,
            message: message,
            timeToLive: timeToLive,
            identifier: identifier,
            replace: replace,
            apnsProduction: options.apnsProduction,
            priority: options.priority,
            cid: cid,
            apnsCollapseID: collapseID,
            sendno: options.sendno,
            overrideMsgID: options.overrideMsgID,
            spreadMinutes: options.bigPushDuration.flatMap { $0 > 0 ? $0 : nil },
            classification: options.classification,
            callback: callback,
            warnings: warnings
        )
        push.liveActivity = liveActivity
        if let smsMessage {
            if liveActivity != nil { throw .invalidField("sms_message", "a Live Activity push has no SMS fallback") }
            push.sms = smsMessage.fallback
        }
        try Self.checkAPNsPayloadSize(push)
        return push
    }

    /// This request replacing the push whose identifier `identifier` is (what
    /// `options.override_msg_id` names, looked up by the API), validated.
    public func overriding(identifier: String) throws(HeraldError) -> (request: PushRequest, push: Push) {
        guard options?.replace == nil else {
            throw .invalidField("options.override_msg_id", "give override_msg_id or replace, not both")
        }
        var request = self
        request.options?.replace = identifier
        return (request, try request.validated())
    }

    /// The identifier and JPush's `apns_collapse_id`. Herald's identifier is the APNs
    /// collapse id too: `apns_collapse_id` is the identifier unless the push replaces
    /// another (JPush's `override_msg_id` and `apns_collapse_id` are independent: a push
    /// may replace a message on Android and collapse under another id on iOS); then it is
    /// the APNs collapse id alone.
    private func validatedIdentifier(_ options: PushOptions) throws(HeraldError) -> (identifier: String?, collapseID: String?) {
        let identifier = try options.identifier.map { value throws(HeraldError) in try Self.identifier(value, field: "options.identifier") }
        let collapseID = try options.apnsCollapseID.map { value throws(HeraldError) in
            try Self.identifier(value, field: "options.apns_collapse_id")
        }
        if let identifier, let collapseID, identifier != collapseID {
            throw .invalidField("options.apns_collapse_id", "must be omitted or equal options.identifier")
        }
        if options.replace != nil || options.overrideMsgID != nil { return (identifier, collapseID) }
        return (identifier ?? collapseID, nil)
    }

    /// The platforms `platform` names; nil for all. JPush's `winphone`, still in its
    /// documentation and sent by its PHP and Go clients, names no device Herald serves: it
    /// is ignored, with a warning.
    private func validatedPlatforms(warnings: inout [String]) throws(HeraldError) -> [String]? {
        guard case .list(let names) = platform else { return nil }
        if names.isEmpty { throw .invalidField("platform", "expected \"all\" or a list of at least one platform") }
        var platforms = Set<String>()
        for (index, name) in names.enumerated() {
            if name == "winphone" {
                warnings.append("platform[\(index)]: winphone ignored (Herald has no Windows Phone channel)")
                continue
            }
            guard let named = PushPlatforms.platforms(named: name) else {
                throw .invalidField("platform[\(index)]", "expected one of \(PushPlatforms.names.joined(separator: ", "))")
            }
            platforms.formUnion(named.map(\.rawValue))
        }
        return platforms.sorted()
    }

    /// JPush's options that Herald checks, and of them those it stores without applying yet.
    private func validateUnapplied(_ options: PushOptions, warnings: inout [String]) throws(HeraldError) {
        if let duration = options.bigPushDuration {
            guard (0...PushLimits.maxBigPushDuration).contains(duration) else {
                throw .invalidField("options.big_push_duration", "must be 0 to \(PushLimits.maxBigPushDuration) minutes")
            }
        }
        if let classification = options.classification {
            guard classification == 0 || classification == 1 else { throw .invalidField("options.classification", "must be 0 or 1") }
        }
        if options.thirdPartyChannel != nil {
            warnings.append("options.third_party_channel: accepted, not applied yet (Herald has no Android vendor channel)")
        }
        for key in options.unapplied.keys.sorted() {
            warnings.append("options.\(key): accepted, not applied yet")
        }
    }

    private func validate(_ audience: PushAudience) throws(HeraldError) -> ValidatedAudience {
        guard case .filter(let filter) = audience else { return .everyone }
        // An empty list is not set, as in JPush.
        func given<Value: Collection>(_ values: Value?) -> Value? { values?.isEmpty == false ? values : nil }
        for (field, present) in [
            ("segment", given(filter.segment) != nil), ("abtest", given(filter.abtest) != nil), ("file", filter.file != nil),
        ] where present {
            throw .invalidField("audience.\(field)", "not supported by Herald (use registration_id, alias or tags)")
        }
        var result = ValidatedAudience()
        if let id = filter.liveActivityID {
            // The activity's own tokens are the audience (``validatedLiveActivity(_:)``).
            result.liveActivity = .activity(id: try Self.liveActivityID(id))
        }
        if let ids = given(filter.registrationID) {
            result.registrationIDs = try Validation.registrationIDs(ids, field: "audience.registration_id", max: PushLimits.maxAudienceIDs)
        }
        result.aliases = try given(filter.alias).map { values throws(HeraldError) in
            try Validation.labels(values, field: "audience.alias", max: PushLimits.maxAudienceIDs)
        }
        func tags(_ values: [String]?, field: String) throws(HeraldError) -> [String]? {
            try given(values).map { values throws(HeraldError) in try Validation.labels(values, field: field, max: PushLimits.maxAudienceTags) }
        }
        result.tags = try tags(filter.tag, field: "audience.tag")
        result.tagsAnd = try tags(filter.tagAnd, field: "audience.tag_and")
        result.tagsNot = try tags(filter.tagNot, field: "audience.tag_not")
        if result.registrationIDs == nil && result.aliases == nil && result.tags == nil && result.tagsAnd == nil && result.liveActivity == nil {
            if result.tagsNot != nil {
                throw .invalidField("audience", "tag_not needs registration_id, alias, tag or tag_and beside it (or use \"all\")")
            }
            throw .invalidField("audience", "expected \"all\" or at least one non-empty list of registration_id, alias, tag, tag_and")
        }
        return result
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
