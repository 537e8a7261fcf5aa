import Foundation
import HeraldCore
import Logging
import PostgresNIO

/// What the web console reads that the API has no route for: an app's summary. On the
/// durable pool, with the API's (``APIStore/console``).
public struct ConsoleStore: StoreFacade {
    let core: StoreCore

    /// A message as the console lists it.
    public struct RecentMessage: Sendable, Hashable {
        public var msgID: String
        public var sentAt: Date
        /// The notification's alert (its text), if it has one.
        public var alert: String?
    }

    /// The app's device count and its latest messages, newest first.
    public func summary(appID: Int64, messages limit: Int = 20) async throws -> (devices: Int, messages: [RecentMessage]) {
        var devices = 0
        for try await count in try await client.query("SELECT count(*) FROM devices WHERE app_id = \(appID)", logger: logger)
            .decode(Int.self)
        {
            devices = count
        }
        let rows = try await client.query(
            """
            SELECT msg_id, created_at,
                   COALESCE(request->'notification'->>'alert', request->'notification'->'ios'->>'alert',
                            request->'message'->>'msg_content')
            FROM messages WHERE app_id = \(appID) ORDER BY id DESC LIMIT \(limit)
            """,
            logger: logger
        )
        var messages: [RecentMessage] = []
        for try await (msgID, sentAt, alert) in rows.decode((String, Date, String?).self) {
            messages.append(RecentMessage(msgID: msgID, sentAt: sentAt, alert: alert))
        }
        return (devices, messages)
    }
}

extension ConsoleStore {
    /// A device as a search lists it.
    public struct FoundDevice: Sendable, Hashable {
        public var registrationID: String
        public var platform: String
        public var alias: String?
    }

    /// The app's devices `query` names: its registration id, its alias, one of its tags, or
    /// the start of its APNs token (8 characters at least). At most `limit`, oldest first.
    public func findDevices(appID: Int64, query: String, limit: Int = 50) async throws -> [FoundDevice] {
        let rows = try await client.query(
            """
            SELECT d.registration_id, d.platform, d.alias FROM devices d
            WHERE d.app_id = \(appID) AND (d.registration_id = \(query) OR d.alias = \(query)
                OR (length(\(query)) >= 8 AND starts_with(d.apns_token, lower(\(query))))
                OR d.id IN (SELECT t.device_id FROM device_tags t WHERE t.app_id = \(appID) AND t.tag = \(query)))
            ORDER BY d.id LIMIT \(limit)
            """,
            logger: logger
        )
        var found: [FoundDevice] = []
        for try await (registrationID, platform, alias) in rows.decode((String, String, String?).self) {
            found.append(FoundDevice(registrationID: registrationID, platform: platform, alias: alias))
        }
        return found
    }
}

extension APIStore {
    /// What the web console reads beyond the API's routes.
    public var console: ConsoleStore { ConsoleStore(core: core) }
}
