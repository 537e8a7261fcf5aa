import Foundation
import HeraldCore
import HeraldTestSupport
import PostgresNIO
import Testing

@testable import HeraldStore

/// FCM's SQL, directly: the service account sealed at rest, a dead token removed only while
/// it is still the device's, and migration 0040's functions (`sent_fcm` and its channel,
/// the callback bit) written for a copy FCM took.
@Suite struct FCMStoreTests {
    private func setUp(_ store: TestStores) async throws -> (app: CreatedApp, deviceID: Int64, registrationID: String) {
        let app = try await store.api.createApp(name: "Android shop")
        let registered = try await store.api.devices.register(
            appKey: app.app.appKey,
            DeviceRegistration(platform: .android, fcmToken: "tok:APA91b" + String(repeating: "a", count: 40))
        )
        let device = try #require(try await store.gateway.device(registrationID: registered.registrationID))
        return (app, device.deviceID, registered.registrationID)
    }

    @Test func theServiceAccountIsSealedAtRestAndClearedByAnUpload() async throws {
        try await TestDatabase.withStore { store in
            let (app, _, _) = try await setUp(store)
            let account = FCMServiceAccount(
                projectID: "shop",
                clientEmail: "a@shop.iam.gserviceaccount.com",
                privateKeyID: "k1",
                privateKeyPEM: "-----BEGIN PRIVATE KEY-----\nSECRETSECRET\n-----END PRIVATE KEY-----\n",
                tokenURI: FCMServiceAccount.googleTokenURI
            )
            #expect(try await store.api.fcm.setCredentials(account, appKey: app.app.appKey))
            for try await sealed in try await store.sql.query("SELECT fcm_credentials FROM apps WHERE id = \(app.app.id)").decode(Data.self) {
                #expect(!String(decoding: sealed, as: UTF8.self).contains("SECRETSECRET"))
            }
            #expect(try await store.center.fcm.serviceAccount(appID: app.app.id)?.account == account)
            try await store.center.fcm.markBroken(appID: app.app.id, reason: "THIRD_PARTY_AUTH_ERROR")
            #expect(try await store.api.fcm.credentials(appKey: app.app.appKey)?.brokenReason == "THIRD_PARTY_AUTH_ERROR")
            // A new upload clears the refusal; a deletion removes everything.
            #expect(try await store.api.fcm.setCredentials(account, appKey: app.app.appKey))
            #expect(try await store.api.fcm.credentials(appKey: app.app.appKey)?.brokenReason == nil)
            #expect(try await store.api.fcm.deleteCredentials(appKey: app.app.appKey))
            #expect(try await store.center.fcm.serviceAccount(appID: app.app.id) == nil)
            #expect(try await !store.api.fcm.deleteCredentials(appKey: app.app.appKey))
        }
    }

    @Test func aDeadTokenIsRemovedOnlyWhileItIsStillTheDevices() async throws {
        try await TestDatabase.withStore { store in
            let (app, deviceID, registrationID) = try await setUp(store)
            let old = "tok:APA91b" + String(repeating: "a", count: 40)
            let new = "tok:APA91b" + String(repeating: "b", count: 40)
            // The device registered a new token meanwhile: the old one's death leaves it.
            var change = DeviceChange()
            change.fcmToken = .set(new)
            _ = try await store.api.devices.update(appID: app.app.id, registrationID: registrationID, change)
            try await store.center.fcm.removeToken(deviceID: deviceID, token: old, reason: "UNREGISTERED", messageID: nil)
            #expect(try await store.api.devices.find(appID: app.app.id, registrationID: registrationID)?.fcmToken == new)
            try await store.center.fcm.removeToken(deviceID: deviceID, token: new, reason: "UNREGISTERED", messageID: nil)
            #expect(try await store.api.devices.find(appID: app.app.id, registrationID: registrationID)?.fcmToken == nil)
        }
    }

    @Test func aCopyFCMTookIsLoggedAsSentFCMAndCountsAsSentForCallbacks() async throws {
        try await TestDatabase.withStore { store in
            for try await bit in try await store.sql.query("SELECT herald_callback_bit('sent_fcm')").decode(Int32.self) {
                #expect(bit == 8)
            }
            let (app, deviceID, registrationID) = try await setUp(store)
            let request = PushRequest(
                audience: .filter(AudienceFilter(registrationID: [registrationID])),
                notification: PushNotification(alert: "Hi")
            )
            let pending = PendingPush(
                request,
                push: try request.validated(),
                msgID: try await store.api.newMsgID(),
                appID: app.app.id,
                now: Date(),
                fansOutHere: false
            )
            _ = try await store.api.acceptPushes([pending], fanningOutTo: nil)
            var messageID: Int64 = 0
            for try await id in try await store.sql.query("SELECT id FROM messages WHERE msg_id = \(pending.msgID)").decode(Int64.self) {
                messageID = id
            }
            // The copy may be fanned out by a center first; here the store writes it.
            try await store.sql.query(
                "INSERT INTO deliveries (message_id, device_id) VALUES (\(messageID), \(deviceID)) ON CONFLICT DO NOTHING"
            )
            try await store.center.recordDeliveries(
                messageID: messageID,
                [DeliveryUpdate(deviceID: deviceID, state: .fcm, apnsAttempted: true, event: .init(channel: "fcm"))]
            )
            var events: [(String, String?)] = []
            let rows = try await store.sql.query(
                "SELECT type, data->>'channel' FROM events WHERE message_id = \(messageID) AND device_id = \(deviceID) ORDER BY id"
            )
            for try await row in rows.decode((String, String?).self) { events.append(row) }
            #expect(events.contains { $0.0 == "sent_fcm" && $0.1 == "fcm" }, "\(events)")
            for try await state in try await store.sql.query(
                "SELECT state FROM deliveries WHERE message_id = \(messageID) AND device_id = \(deviceID)"
            ).decode(String.self) {
                #expect(state == "fcm")
            }
        }
    }
}
