import Foundation
import HeraldCore
import PostgresNIO

/// A device's ActivityKit token, as stored (migration 0023).
public struct LiveActivityToken: Sendable, Hashable {
    public var target: LiveActivityTarget
    /// Hex, lowercase.
    public var token: String
    public var updatedAt: Date
}

/// The ActivityKit tokens of devices (migration 0023): a push-to-start token per attributes
/// type and an update token per running activity, set and removed by the device.
extension DeviceStore {
    /// Sets the device's token for `target`. A token belongs to one device of the app: set
    /// here, it leaves any other device of the app that held it. False when the app has no
    /// such device.
    public func setLiveActivityToken(appID: Int64, registrationID: String, target: LiveActivityTarget, token: String) async throws -> Bool {
        guard Identifiers.isRegistrationID(registrationID) else { return false }
        return try await transaction { connection in
            let rows = try await connection.query(
                "SELECT id FROM devices WHERE app_id = \(appID) AND registration_id = \(registrationID) FOR UPDATE",
                logger: logger
            )
            var found: Int64?
            for try await id in rows.decode(Int64.self) { found = id }
            guard let deviceID = found else { return false }
            try await connection.query(
                """
                DELETE FROM live_activity_tokens WHERE app_id = \(appID) AND token = \(token) AND kind = \(target.kind)
                  AND NOT (device_id = \(deviceID) AND key = \(target.key))
                """,
                logger: logger
            )
            try await connection.query(
                """
                INSERT INTO live_activity_tokens (device_id, app_id, kind, key, token)
                VALUES (\(deviceID), \(appID), \(target.kind), \(target.key), \(token))
                ON CONFLICT (device_id, kind, key) DO UPDATE SET token = EXCLUDED.token, updated_at = now()
                """,
                logger: logger
            )
            return true
        }
    }

    /// Removes the device's token for `target`. Nil when the app has no such device, else
    /// whether it had the token.
    public func deleteLiveActivityToken(appID: Int64, registrationID: String, target: LiveActivityTarget) async throws -> Bool? {
        guard let deviceID = try await deviceID(appID: appID, registrationID: registrationID) else { return nil }
        return try await client.query(
            """
            DELETE FROM live_activity_tokens WHERE device_id = \(deviceID) AND kind = \(target.kind) AND key = \(target.key)
            RETURNING 1
            """,
            logger: logger
        ).count() > 0
    }

    /// The device's tokens, push-to-start first, each kind by key. Nil when the app has no
    /// such device.
    public func liveActivityTokens(appID: Int64, registrationID: String) async throws -> [LiveActivityToken]? {
        guard let deviceID = try await deviceID(appID: appID, registrationID: registrationID) else { return nil }
        let rows = try await client.query(
            """
            SELECT kind, key, token, updated_at FROM live_activity_tokens WHERE device_id = \(deviceID)
            ORDER BY kind, key
            """,
            logger: logger
        )
        var tokens: [LiveActivityToken] = []
        for try await (kind, key, token, updatedAt) in rows.decode((String, String, String, Date).self) {
            let target: LiveActivityTarget = kind == "start" ? .pushToStart(attributesType: key) : .activity(id: key)
            tokens.append(LiveActivityToken(target: target, token: token, updatedAt: updatedAt))
        }
        return tokens
    }

    private func deviceID(appID: Int64, registrationID: String) async throws -> Int64? {
        guard Identifiers.isRegistrationID(registrationID) else { return nil }
        let rows = try await client.query(
            "SELECT id FROM devices WHERE app_id = \(appID) AND registration_id = \(registrationID)",
            logger: logger
        )
        for try await id in rows.decode(Int64.self) { return id }
        return nil
    }
}
