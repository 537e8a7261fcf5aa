import Foundation
import HeraldKit
import HeraldNodeTesting
import HeraldTestSupport
import Testing

/// Devices imported from JPush are reached by pushes as they are: an iOS device through
/// APNs with its imported token, another over MQTT once it claimed its old registration id.
@Suite struct ImportedDeviceDeliveryTests {
    @Test func anImportedIOSDeviceGetsAPNsWithItsImportedToken() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(41)
            let rid = "1a1018970a8ae1e8f84"
            let imported = try await test.importDevices(
                #"{"registration_id": "\#(rid)", "apns_token": "\#(token)", "apns_environment": "sandbox", "tags": ["jpush"]}"#
            )
            #expect(imported["created"].int == 1)
            let sent = try await test.push(["audience": ["tag": ["jpush"]], "notification": ["alert": "Moved"]])
            #expect(sent.status == 200)
            let received = try await test.waitForAPNs(token)
            #expect(received.count == 1)
            #expect(received.first?.json["aps"]["alert"].string == "Moved")
            #expect(try await test.status(sent.msgID, rid, becomes: "sent_apns") == "sent_apns")
        }
    }

    @Test func anImportedDeviceClaimsItsOldIDAndReceivesOverMQTT() async throws {
        try await TestNode.run { test in
            let rid = "0a0018970a8ae1e8f84"
            _ = try await test.importDevices(#"{"registration_id": "\#(rid)", "platform": "android", "alias": "carol"}"#)
            // Before the claim the gateway refuses the id.
            await #expect(throws: (any Error).self) {
                _ = try await test.rawConnection(DeviceCredentials(registrationID: rid, deviceSecret: ""))
            }
            let claim = try await test.call(
                "POST",
                "/v3/devices",
                ["app_key": .string(test.appKey), "platform": "android"],
                as: .basic(rid, "")
            )
            #expect(claim.status == 200)
            #expect(claim.json["registration_id"].string == rid)
            let credentials = DeviceCredentials(registrationID: rid, deviceSecret: claim.json["device_secret"].string ?? "")
            try await test.online(credentials) { reader in
                let sent = try await test.push(["audience": ["alias": ["carol"]], "message": ["msg_content": "hello"]])
                #expect(sent.status == 200)
                let event = try await reader.next(where: { $0.message != nil })
                #expect(event?.message?.content == "hello")
            }
        }
    }
}

extension TestNode {
    /// Imports NDJSON rows into the test's app, as the admin.
    func importDevices(_ ndjson: String) async throws -> JSON {
        let answer = try await TestHTTP.exchange(
            "POST",
            apiURL.absoluteString + "/admin/v1/apps/\(appKey)/devices/import",
            headers: ["Authorization": "Bearer \(Self.adminToken)", "Content-Type": "application/x-ndjson"],
            body: Data(ndjson.utf8)
        )
        guard answer.status == 200 else { throw TestFailure("import answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))") }
        return try JSONDecoder().decode(JSON.self, from: answer.body)
    }
}
