import HeraldCore
import NIOCore
import PostgresNIO

/// The apps and devices of a cluster benchmark, inserted set-based: the devices of the
/// fleet (Linux, so no APNs; all with one tag), and a second app's devices that only the
/// takeover measurement connects (so no push of the fleet's app reaches them).
struct ClusterApp: Sendable {
    var appKey: String
    var masterSecret: String
    /// The fleet's devices, in the order the load generators get them.
    var registrationIDs: [String]
    /// The tag every fleet device has.
    var tag: String
    var takeoverAppKey: String
    var takeoverIDs: [String]

    /// Every device's secret (its MQTT password).
    static let deviceSecret = "bench-device-secret"

    /// Creates both apps and their devices: registration ids are the device's number in
    /// hex, padded to 20 digits, so two databases seeded alike hold the same devices.
    static func seed(_ sql: PostgresClient, devices: Int, takeovers: Int, tag: String = "bench") async throws -> ClusterApp {
        let (appID, appKey, masterSecret) = try await createApp(sql, name: "cluster-bench")
        let hash = ByteBuffer(bytes: SecretHash.digest(deviceSecret))
        try await sql.query(
            """
            INSERT INTO devices (app_id, registration_id, platform, secret_hash)
            SELECT \(appID), lpad(to_hex(g), 20, '0'), 'linux', \(hash) FROM generate_series(1, \(devices)) AS g
            """
        )
        try await sql.query("INSERT INTO device_tags (app_id, tag, device_id) SELECT app_id, \(tag), id FROM devices WHERE app_id = \(appID)")
        let (takeoverAppID, takeoverAppKey, _) = try await createApp(sql, name: "cluster-bench-takeover")
        try await sql.query(
            """
            INSERT INTO devices (app_id, registration_id, platform, secret_hash)
            SELECT \(takeoverAppID), lpad(to_hex(g), 20, '0'), 'linux', \(hash) FROM generate_series(\(devices + 1), \(devices + takeovers)) AS g
            """
        )
        try await sql.query("VACUUM ANALYZE")
        return ClusterApp(
            appKey: appKey,
            masterSecret: masterSecret,
            registrationIDs: (1...devices).map(registrationID),
            tag: tag,
            takeoverAppKey: takeoverAppKey,
            takeoverIDs: takeovers == 0 ? [] : (devices + 1...devices + takeovers).map(registrationID)
        )
    }

    private static func createApp(_ sql: PostgresClient, name: String) async throws -> (id: Int64, key: String, secret: String) {
        let key = Identifiers.newAppKey()
        let secret = Identifiers.newMasterSecret()
        let rows = try await sql.query(
            """
            INSERT INTO apps (app_key, name, master_secret_hash)
            VALUES (\(key), \(name), \(ByteBuffer(bytes: SecretHash.digest(secret)))) RETURNING id
            """
        )
        for try await id in rows.decode(Int64.self) { return (id, key, secret) }
        throw BenchError("app \(name) was not created")
    }

    /// `number` in hex, padded to 20 digits (what the SQL above makes of it).
    private static func registrationID(_ number: Int) -> String {
        let hex = String(number, radix: 16)
        return String(repeating: "0", count: 20 - hex.count) + hex
    }
}
