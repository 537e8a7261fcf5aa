import Foundation
import HeraldCore
import PostgresNIO

/// Whether a device is connected, and when it last was.
public struct DevicePresence: Sendable, Hashable {
    /// Connected now, to a node not declared dead.
    public var online: Bool
    /// When its last connection closed; nil while it is online or when it never connected.
    public var lastOnlineAt: Date?

    public init(online: Bool, lastOnlineAt: Date?) {
        self.online = online
        self.lastOnlineAt = lastOnlineAt
    }
}

extension DeviceStore {
    /// The presence of the app's devices among `registrationIDs`, as `GET /v3/devices/{rid}`
    /// reports it (`device_sessions`); ids that name no device of the app are left out.
    public func presence(appID: Int64, registrationIDs: [String]) async throws -> [String: DevicePresence] {
        let wanted = registrationIDs.filter(Identifiers.isRegistrationID)
        guard !wanted.isEmpty else { return [:] }
        let rows = try await client.query(
            """
            SELECT d.registration_id, n.node_id IS NOT NULL, s.last_seen_at
            FROM devices d
            LEFT JOIN device_sessions s ON s.device_id = d.id
            LEFT JOIN nodes n ON n.node_id = s.node_id
            WHERE d.app_id = \(appID) AND d.registration_id = ANY(\(wanted))
            """,
            logger: logger
        )
        var presence: [String: DevicePresence] = [:]
        for try await (registrationID, online, lastSeen) in rows.decode((String, Bool, Date?).self) {
            presence[registrationID] = DevicePresence(online: online, lastOnlineAt: online ? nil : lastSeen)
        }
        return presence
    }
}
