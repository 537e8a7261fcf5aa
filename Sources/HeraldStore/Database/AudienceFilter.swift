import HeraldCore
import PostgresNIO

extension PostgresQuery.StringInterpolation {
    /// The audience as a condition on `devices d`: every filter given must hold (AND);
    /// `tag` matches any of its tags, `tag_and` all, `tag_not` none; the device's platform
    /// is one of the push's platforms, when it names them.
    /// `after`: only devices with a greater id are wanted (a fan-out's cursor); the tag
    /// lookup starts there in the tag index instead of reading the tag from its start.
    /// A local-time schedule's push adds its time zone (``AudienceTimeZone``).
    mutating func appendInterpolation(audienceFilter audience: ValidatedAudience, appID: Int64, after cursor: Int64 = 0) {
        appendLiteral("(")
        appendInterpolation(audience.platforms)
        appendLiteral("::text[] IS NULL OR d.platform = ANY(")
        appendInterpolation(audience.platforms)
        appendLiteral("::text[])) AND (")
        appendInterpolation(audience.registrationIDs)
        appendLiteral("::text[] IS NULL OR d.registration_id = ANY(")
        appendInterpolation(audience.registrationIDs)
        appendLiteral("::text[])) AND (")
        appendInterpolation(audience.aliases)
        appendLiteral("::text[] IS NULL OR d.alias = ANY(")
        appendInterpolation(audience.aliases)
        appendLiteral("::text[])) AND (")
        appendInterpolation(audience.tags)
        appendLiteral("::text[] IS NULL OR d.id IN (SELECT t.device_id FROM device_tags t WHERE t.app_id = ")
        appendInterpolation(appID)
        appendLiteral(" AND t.device_id > ")
        appendInterpolation(cursor)
        appendLiteral(" AND t.tag = ANY(")
        appendInterpolation(audience.tags)
        appendLiteral("::text[]))) AND (")
        appendInterpolation(audience.tagsAnd)
        appendLiteral("::text[] IS NULL OR (SELECT count(*) FROM device_tags t WHERE t.app_id = ")
        appendInterpolation(appID)
        appendLiteral(" AND t.device_id = d.id AND t.tag = ANY(")
        appendInterpolation(audience.tagsAnd)
        appendLiteral("::text[])) = cardinality(")
        appendInterpolation(audience.tagsAnd)
        appendLiteral("::text[])) AND (")
        appendInterpolation(audience.tagsNot)
        appendLiteral("::text[] IS NULL OR NOT EXISTS (SELECT 1 FROM device_tags t WHERE t.app_id = ")
        appendInterpolation(appID)
        appendLiteral(" AND t.device_id = d.id AND t.tag = ANY(")
        appendInterpolation(audience.tagsNot)
        appendLiteral("::text[])))")
        // Only a local-time schedule's pushes have it: every other push's statement stays
        // as it was, text and plan.
        if let timeZone = audience.timeZone {
            appendLiteral(" AND COALESCE(d.time_zone, ")
            appendInterpolation(timeZone.fallback)
            appendLiteral(") = ")
            appendInterpolation(timeZone.zone)
        }
        // Only Live Activity pushes have it: the devices holding the token they go to.
        if let liveActivity = audience.liveActivity {
            appendLiteral(" AND EXISTS (SELECT 1 FROM live_activity_tokens la WHERE la.app_id = ")
            appendInterpolation(appID)
            appendLiteral(" AND la.kind = ")
            appendInterpolation(liveActivity.kind)
            appendLiteral(" AND la.key = ")
            appendInterpolation(liveActivity.key)
            appendLiteral(" AND la.device_id = d.id)")
        }
    }
}
