import HeraldCore
import PostgresNIO

extension CenterStore {
    /// The token each of `deviceIDs` holds for `target` (migration 0023); a device without
    /// one (removed since the fan-out) is left out.
    public func liveActivityTokens(deviceIDs: [Int64], target: LiveActivityTarget) async throws -> [Int64: String] {
        guard !deviceIDs.isEmpty else { return [:] }
        let rows = try await client.query(
            """
            SELECT device_id, token FROM live_activity_tokens
            WHERE device_id = ANY(\(deviceIDs)) AND kind = \(target.kind) AND key = \(target.key)
            """,
            logger: logger
        )
        var tokens: [Int64: String] = [:]
        for try await (deviceID, token) in rows.decode((Int64, String).self) { tokens[deviceID] = token }
        return tokens
    }
}
