import Foundation
import HeraldCore
import PostgresNIO

extension DeviceStore {
    /// What a device's diagnosis is made of (``DeviceDiagnosis/Facts``): the device, its
    /// presence, its app's APNs credentials and its last `recent` copies, each with the
    /// status the status API gives it. Nil when the app has no such device.
    public func diagnosisFacts(app: AppRecord, registrationID: String, recent: Int = 10) async throws -> DeviceDiagnosis.Facts? {
        guard let device = try await find(appID: app.id, registrationID: registrationID) else { return nil }
        let details = try await client.query(
            "SELECT id, token_invalidated_at, in_background FROM devices WHERE app_id = \(app.id) AND registration_id = \(registrationID)",
            logger: logger
        )
        var found: (Int64, Date?, Bool)?
        for try await row in details.decode((Int64, Date?, Bool).self) { found = row }
        guard let (deviceID, invalidatedAt, inBackground) = found else { return nil }
        let rows = try await client.query(
            """
            SELECT m.msg_id, m.created_at,
              \(unescaped: DeliveryStatus.stateSQL), dl.apns_reason, dl.opened_at IS NOT NULL
            FROM deliveries dl JOIN messages m ON m.id = dl.message_id LEFT JOIN device_acks a ON a.device_id = dl.device_id
            WHERE dl.device_id = \(deviceID)
            ORDER BY dl.message_id DESC LIMIT \(Int64(recent))
            """,
            logger: logger
        )
        var copies: [DeviceDiagnosis.Copy] = []
        for try await (msgID, sentAt, state, reason, opened) in rows.decode((String, Date, String, String?, Bool).self) {
            let status = DeliveryStatus.name(ofState: state)
            copies.append(DeviceDiagnosis.Copy(msgID: msgID, sentAt: sentAt, status: status, reason: reason, opened: opened))
        }
        var facts = DeviceDiagnosis.Facts(
            platform: device.platform,
            hasAPNsToken: device.apnsToken != nil,
            tokenValid: device.tokenValid,
            tokenInvalidatedAt: invalidatedAt,
            tokenEnvironment: device.apnsEnvironment,
            inBackground: inBackground,
            node: device.node,
            lastOnlineAt: device.lastOnlineAt,
            credentials: app.apns,
            credentialsProblem: app.apnsProblem,
            recent: copies
        )
        facts.hasVoIPToken = device.voipToken != nil
        facts.hasFCMToken = device.fcmToken != nil
        if let fcm = try await FCMStore(core: core).credentials(appKey: app.appKey) {
            facts.fcmCredentials = fcm.summary
            facts.fcmProblem = fcm.brokenReason
        }
        return facts
    }
}
