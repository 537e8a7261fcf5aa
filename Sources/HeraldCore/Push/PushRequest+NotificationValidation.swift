import Foundation

extension PushRequest {
    /// Checks the notification; false when nothing of it is delivered (it has only parts
    /// for channels Herald doesn't have: hmos, quickapp, winphone).
    func validate(_ notification: PushNotification, warnings: inout [String]) throws(HeraldError) -> Bool {
        for (field, alert) in [("notification.alert", notification.alert), ("notification.android.alert", notification.android?.alert)] {
            if let alert, alert.utf8.count > PushLimits.maxAlertBytes { throw .tooLarge(field, "at most \(PushLimits.maxAlertBytes) bytes") }
        }
        if notification.alert == nil, notification.ios == nil, notification.android == nil, notification.voip == nil {
            let parts = [("hmos", notification.hmos), ("quickapp", notification.quickapp), ("winphone", notification.winphone)]
                .compactMap { $0.1 == nil ? nil : $0.0 }
            guard !parts.isEmpty else {
                throw .missingField("notification", "needs alert, ios, android or voip")
            }
            // JPush accepts it (it has those channels): so does Herald, which stores it and
            // delivers nothing of it.
            warnings.append(
                "notification: only \(parts.joined(separator: ", ")), for channels Herald doesn't have; accepted and stored, delivered to no device"
            )
            return false
        }
        if notification.hmos != nil {
            warnings.append("notification.hmos: accepted and stored, not delivered (Herald has no HarmonyOS channel)")
        }
        if notification.quickapp != nil {
            warnings.append("notification.quickapp: accepted and stored, not delivered (Herald has no quick app channel)")
        }
        if notification.winphone != nil {
            warnings.append("notification.winphone: accepted and stored, not delivered (Herald has no Windows Phone channel)")
        }
        guard let ios = notification.ios else { return true }
        try Self.validateRichContent(ios)
        try Self.validateLocalizations(ios)
        if let level = ios.interruptionLevel, !["passive", "active", "time-sensitive", "critical"].contains(level) {
            throw .invalidField("notification.ios.interruption-level", "must be passive, active, time-sensitive or critical")
        }
        if ios.pushType == .voip, notification.voip != nil {
            throw .invalidField("notification.ios.push_type", "voip can't go with notification.voip, which is the VoIP push's payload: omit one")
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
        return true
    }

    /// Refuses a notification whose APNs payload would be over Apple's limit, rendered as
    /// the center renders it, with the largest message id and badge it can carry: APNs
    /// would refuse every copy (PayloadTooLarge), so nothing is accepted. The VoIP payload
    /// sent beside a notification is held to the VoIP limit.
    static func checkAPNsPayloadSize(_ push: Push) throws(HeraldError) {
        if let liveActivity = push.liveActivity {
            let size = PushRendering.liveActivityPayload(liveActivity, timestamp: 9_999_999_999, msgID: PushRendering.longestMsgID).count
            let limit = PushLimits.maxAPNsPayloadBytes
            if size > limit {
                throw .tooLarge(
                    "live_activity",
                    "the APNs payload would be \(size) bytes, \(size - limit) over APNs' limit of \(limit) bytes; shorten the content state or the attributes"
                )
            }
        }
        if push.isLocalized {
            // Each language's rendering is sent to someone.
            for variant in push.localizedVariants { try checkAPNsPayloadSize(variant) }
            return
        }
        guard let notification = push.notification, notification.reachesApple else { return }
        let limit = push.pushType == .voip ? PushLimits.maxAPNsVoIPPayloadBytes : PushLimits.maxAPNsPayloadBytes
        // Most pushes are far below the limit even with every byte escaped: no rendering.
        if PushRendering.apnsPayloadQuickBound(push) > limit {
            let size = PushRendering.apnsPayloadSizeBound(push)
            if size > limit {
                let field = push.notification?.ios?.notificationConfig == nil ? "notification" : "notification.ios.category"
                throw tooLarge(size, limit: limit, pushType: push.pushType, field: field)
            }
        }
        if push.hasVoIPCompanion {
            let size = PushRendering.voipPayload(push, msgID: PushRendering.longestMsgID).count
            let limit = PushLimits.maxAPNsVoIPPayloadBytes
            if size > limit { throw tooLarge(size, limit: limit, pushType: .voip, field: "notification.voip") }
        }
    }

    private static func tooLarge(_ size: Int, limit: Int, pushType: IOSPushType, field: String) -> HeraldError {
        .tooLarge(
            field,
            "the APNs payload would be \(size) bytes, \(size - limit) over APNs' limit of \(limit) bytes for \(pushType.rawValue) pushes; shorten the alert or the extras"
                + (field == "notification.ios.category" ? ", or the category's actions and routes (its notification_config)" : "")
        )
    }
}

extension PushRequest {
    /// The media URL, relevance score, target content id and filter criteria.
    static func validateRichContent(_ ios: IOSNotification) throws(HeraldError) {
        if let url = ios.mediaURL {
            let lowered = url.lowercased()
            guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://"), let parsed = URL(string: url), parsed.host?.isEmpty == false
            else { throw .invalidField("notification.ios.media_url", "must be an http or https URL") }
            if url.utf8.count > PushLimits.maxMediaURLBytes {
                throw .invalidField("notification.ios.media_url", "at most \(PushLimits.maxMediaURLBytes) bytes, not \(url.utf8.count)")
            }
        }
        if let score = ios.relevanceScore, !(0...1).contains(score) {
            throw .invalidField("notification.ios.relevance-score", "must be 0 to 1")
        }
        for (field, value) in [("target-content-id", ios.targetContentID), ("filter-criteria", ios.filterCriteria)] {
            if let value, value.isEmpty || value.utf8.count > PushLimits.maxIdentifierBytes * 4 {
                throw .invalidField("notification.ios.\(field)", "must be 1 to \(PushLimits.maxIdentifierBytes * 4) bytes")
            }
        }
    }
}

extension PushLimits {
    /// Bytes in `notification.ios.media_url`.
    public static let maxMediaURLBytes = 1024
    /// Bytes in `notification.alert` (and an Android part's alert).
    public static let maxAlertBytes = 4096
}
