import HeraldCore
import PostgresNIO

extension DeviceStore {
    /// The app's distinct tags, in order.
    ///
    /// A loose index scan over the tag index: one index probe per distinct tag, not a
    /// pass over every (tag, device) row, so it stays fast with millions of devices.
    public func tags(appID: Int64) async throws -> [String] {
        let rows = try await client.query(
            """
            WITH RECURSIVE t(tag) AS (
                (SELECT tag FROM device_tags WHERE app_id = \(appID) ORDER BY tag LIMIT 1)
                UNION ALL
                SELECT (SELECT tag FROM device_tags WHERE app_id = \(appID) AND tag > t.tag ORDER BY tag LIMIT 1)
                FROM t WHERE t.tag IS NOT NULL
            )
            SELECT tag FROM t WHERE tag IS NOT NULL
            """,
            logger: logger
        )
        var tags: [String] = []
        for try await tag in rows.decode(String.self) { tags.append(tag) }
        return tags
    }

    /// Adds and removes devices of a tag in one transaction; every id must be a device of the app.
    public func changeTagMembers(appID: Int64, tag: String, add: [String], remove: [String]) async throws -> (added: Int, removed: Int) {
        try await transaction { connection in
            let wanted = Array(Set(add + remove))
            var ids: [String: Int64] = [:]
            let rows = try await connection.query(
                """
                SELECT registration_id, id FROM devices
                WHERE app_id = \(appID) AND registration_id = ANY(\(wanted)) ORDER BY id FOR UPDATE
                """,
                logger: logger
            )
            for try await (registrationID, id) in rows.decode((String, Int64).self) { ids[registrationID] = id }
            let unknown = wanted.filter { ids[$0] == nil }.sorted()
            if !unknown.isEmpty {
                let shown = unknown.prefix(5).joined(separator: ", ") + (unknown.count > 5 ? ", ..." : "")
                throw HeraldError(.deviceNotFound, "registration_ids: \(unknown.count) not in this app: \(shown)")
            }

            let removeIDs = remove.compactMap { ids[$0] }
            let addIDs = add.compactMap { ids[$0] }
            var removed = 0
            if !removeIDs.isEmpty {
                removed = try await connection.query(
                    "DELETE FROM device_tags WHERE app_id = \(appID) AND tag = \(tag) AND device_id = ANY(\(removeIDs)) RETURNING device_id",
                    logger: logger
                ).count()
            }
            var added = 0
            if !addIDs.isEmpty {
                added = try await connection.query(
                    """
                    INSERT INTO device_tags (app_id, tag, device_id)
                    SELECT \(appID), \(tag), id FROM unnest(\(addIDs)::bigint[]) AS id
                    ON CONFLICT DO NOTHING RETURNING device_id
                    """,
                    logger: logger
                ).count()
                let full = try await connection.query(
                    """
                    SELECT d.registration_id FROM device_tags t JOIN devices d ON d.id = t.device_id
                    WHERE t.device_id = ANY(\(addIDs)) GROUP BY d.registration_id
                    HAVING count(*) > \(Limits.maxTagsPerDevice) LIMIT 1
                    """,
                    logger: logger
                )
                for try await registrationID in full.decode(String.self) {
                    throw HeraldError.limit(
                        "registration_ids.add",
                        "device \(registrationID) would have more than \(Limits.maxTagsPerDevice) tags"
                    )
                }
            }
            return (added, removed)
        }
    }

    /// Removes a tag from every device of the app (of `platforms`, raw values, when given);
    /// returns how many devices had it.
    @discardableResult
    public func deleteTag(appID: Int64, tag: String, platforms: [String]? = nil) async throws -> Int {
        guard let platforms else {
            return try await client.query("DELETE FROM device_tags WHERE app_id = \(appID) AND tag = \(tag) RETURNING device_id", logger: logger)
                .count()
        }
        return try await client.query(
            """
            DELETE FROM device_tags t USING devices d
            WHERE t.app_id = \(appID) AND t.tag = \(tag) AND d.id = t.device_id AND d.platform = ANY(\(platforms))
            RETURNING t.device_id
            """,
            logger: logger
        ).count()
    }

    /// Whether a device of the app has the tag; nil when the app has no such device.
    public func hasTag(appID: Int64, tag: String, registrationID: String) async throws -> Bool? {
        guard Identifiers.isRegistrationID(registrationID) else { return nil }
        let rows = try await client.query(
            """
            SELECT EXISTS (SELECT 1 FROM device_tags t WHERE t.app_id = \(appID) AND t.tag = \(tag) AND t.device_id = d.id)
            FROM devices d WHERE d.app_id = \(appID) AND d.registration_id = \(registrationID)
            """,
            logger: logger
        )
        for try await member in rows.decode(Bool.self) { return member }
        return nil
    }
}
