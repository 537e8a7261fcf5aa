import Foundation
import HeraldKit
import HeraldNodeTesting
import HeraldStore
import HeraldTestSupport
import PostgresNIO
import Testing

/// Deleting a device or an app deletes what was sent to it: its inbox, its delivery rows,
/// and, for an app, its messages and their jobs (migration 0005 does this with triggers
/// rather than foreign keys).
@Suite struct DeletionTests {
    @Test func deletingADeviceOrAnAppDeletesTheirInboxesDeliveriesMessagesAndJobs() async throws {
        try await TestNode.run { test in
            let kept = try await test.register(platform: "android", alias: "kept")
            let deleted = try await test.register(platform: "android", alias: "deleted")
            // Both offline: each copy waits in its device's inbox.
            let direct = try await test.push(["audience": ["alias": ["kept", "deleted"]], "message": ["msg_content": "one"]])
            let queued = try await test.push(["audience": "all", "message": ["msg_content": "two"]])
            #expect(direct.status == 200 && queued.status == 200)
            _ = try await test.settledReport(direct.msgID)
            _ = try await test.settledReport(queued.msgID)
            let deletedID = try await test.deviceID(deleted.registrationID)
            let keptID = try await test.deviceID(kept.registrationID)
            #expect(try await test.count("device_messages WHERE device_id = \(deletedID)") == 2)
            #expect(try await test.count("deliveries WHERE device_id = \(deletedID)") == 2)

            #expect(try await test.stores.api.devices.delete(appID: test.appID, registrationID: deleted.registrationID))
            #expect(try await test.count("device_messages WHERE device_id = \(deletedID)") == 0)
            #expect(try await test.count("deliveries WHERE device_id = \(deletedID)") == 0)
            #expect(try await test.count("device_messages WHERE device_id = \(keptID)") == 2)
            #expect(try await test.count("deliveries WHERE device_id = \(keptID)") == 2)

            // A job not due yet, as a queued push would have.
            try await test.stores.sql.query(
                """
                INSERT INTO push_jobs (message_id, kind, available_at)
                SELECT id, 'push', now() + interval '1 hour' FROM messages WHERE msg_id = \(queued.msgID)
                """
            )
            #expect(try await test.count("push_jobs") == 1)
            #expect(try await test.stores.api.deleteApp(appKey: test.appKey))
            for table in ["messages", "push_jobs", "deliveries", "device_messages", "devices"] {
                #expect(try await test.count(table) == 0, "\(table)")
            }
        }
    }
}

extension TestNode {
    fileprivate func deviceID(_ registrationID: String) async throws -> Int64 {
        let rows = try await stores.sql.query("SELECT id FROM devices WHERE registration_id = \(registrationID)")
        for try await id in rows.decode(Int64.self) { return id }
        throw TestFailure("no device \(registrationID)")
    }
}
