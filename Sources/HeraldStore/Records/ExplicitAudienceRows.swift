/// Explicit audiences (lists of registration ids or aliases) of several pushes flattened
/// into parallel columns for `unnest`: one row per wanted id or alias, tagged with its
/// push's key; the column that doesn't apply holds "" (which names no device).
struct ExplicitAudienceRows {
    var keys: [Int64] = []
    var registrationIDs: [String] = []
    var aliases: [String] = []

    mutating func append(key: Int64, registrationIDs ids: [String]?, aliases names: [String]?) {
        for id in ids ?? [] {
            keys.append(key)
            registrationIDs.append(id)
            aliases.append("")
        }
        for alias in names ?? [] {
            keys.append(key)
            registrationIDs.append("")
            aliases.append(alias)
        }
    }
}
