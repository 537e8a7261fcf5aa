import Foundation
import HeraldCore
import PostgresNIO

extension APIStore {
    /// Gets the cids of a batch single push ready for its group commit: returns the pushes
    /// the app accepted with one of them in the last 24 hours (cid → msg_id), whose answer
    /// is the batch's answer for that cid, and clears the older ones, whose pushes no longer
    /// hold their cid (as ``acceptPush(_:push:appID:now:)`` does for one push).
    public func prepareCIDs(appID: Int64, cids: [String], now: Date = Date()) async throws -> [String: String] {
        guard !cids.isEmpty else { return [:] }
        let since = now.addingTimeInterval(-Self.cidWindow)
        // A data-modifying WITH runs whether or not the query reads it.
        let rows = try await client.query(
            """
            WITH stale AS (
                UPDATE messages SET cid = NULL WHERE app_id = \(appID) AND cid = ANY(\(cids)) AND created_at <= \(since) RETURNING id
            )
            SELECT cid, msg_id FROM messages WHERE app_id = \(appID) AND cid = ANY(\(cids)) AND created_at > \(since)
            """,
            logger: logger
        )
        var earlier: [String: String] = [:]
        for try await (cid, msgID) in rows.decode((String, String).self) { earlier[cid] = msgID }
        return earlier
    }

    /// Which of these registration ids name a device of the app.
    public func knownRegistrationIDs(appID: Int64, _ registrationIDs: [String]) async throws -> Set<String> {
        guard !registrationIDs.isEmpty else { return [] }
        let rows = try await client.query(
            "SELECT registration_id FROM devices WHERE app_id = \(appID) AND registration_id = ANY(\(registrationIDs))",
            logger: logger
        )
        var known: Set<String> = []
        for try await id in rows.decode(String.self) { known.insert(id) }
        return known
    }

    /// Which of these aliases a device of the app carries.
    public func knownAliases(appID: Int64, _ aliases: [String]) async throws -> Set<String> {
        guard !aliases.isEmpty else { return [] }
        let rows = try await client.query(
            "SELECT DISTINCT alias FROM devices WHERE app_id = \(appID) AND alias = ANY(\(aliases))",
            logger: logger
        )
        var known: Set<String> = []
        for try await alias in rows.decode(String.self) { known.insert(alias) }
        return known
    }
}
