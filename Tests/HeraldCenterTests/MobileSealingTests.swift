import Foundation
import HeraldCore
import HeraldNodeTesting
import HeraldTestSupport
import PostgresNIO
import Testing

/// Mobile numbers are sealed at rest (migration 0023): the device API writes them sealed,
/// and the node seals those still in clear (from before, or an import) from its start on.
@Suite struct MobileSealingTests {
    private func stored(_ test: TestNode, _ registrationID: String) async throws -> (clear: String?, sealed: [UInt8]?) {
        let rows = try await test.stores.sql.query(
            "SELECT mobile, mobile_sealed FROM devices WHERE registration_id = \(registrationID)",
            logger: TestDatabase.logger
        )
        for try await (clear, sealed) in rows.decode((String?, Data?).self) { return (clear, sealed.map { Array($0) }) }
        throw TestFailure("no device \(registrationID)")
    }

    @Test func theDeviceAPIStoresTheNumberSealedAndShowsItOnlyToItsApp() async throws {
        try await TestNode.run { test in
            let device = try await test.register(platform: "android")
            let set = try await test.call("POST", "/v3/devices/\(device.registrationID)", ["mobile": "13800138000"])
            #expect(set.json["mobile"].string == "+8613800138000")
            let row = try await stored(test, device.registrationID)
            #expect(row.clear == nil)
            let sealed = try #require(row.sealed)
            #expect(!String(decoding: sealed, as: UTF8.self).contains("13800138000"))
            #expect(try await test.call("GET", "/v3/devices/\(device.registrationID)").json["mobile"].string == "+8613800138000")
            // Another app doesn't see the device at all.
            let other = try await test.stores.api.createApp(name: "Other")
            let foreign = try await test.call(
                "GET",
                "/v3/devices/\(device.registrationID)",
                as: .basic(other.app.appKey, other.masterSecret)
            )
            #expect(foreign.error == HeraldError.Code.deviceNotFound.rawValue)
            // Moved to another app's device, the sealed number doesn't open.
            let rid = try await test.register(platform: "android").registrationID
            try await test.stores.sql.query(
                """
                UPDATE devices SET app_id = \(other.app.id), mobile_sealed = (SELECT mobile_sealed FROM devices WHERE registration_id = \(device.registrationID)),
                    mobile_key = (SELECT mobile_key FROM devices WHERE registration_id = \(device.registrationID))
                WHERE registration_id = \(rid)
                """,
                logger: TestDatabase.logger
            )
            let moved = try await test.call("GET", "/v3/devices/\(rid)", as: .basic(other.app.appKey, other.masterSecret))
            #expect(moved.json["mobile"].string == nil)
        }
    }

    @Test func numbersLeftInClearAreSealedByTheNode() async throws {
        try await TestNode.run { test in
            var devices: [String] = []
            for _ in 0..<3 { devices.append(try await test.register(platform: "android").registrationID) }
            // As migration 0016 or an import left them.
            try await test.stores.sql.query(
                "UPDATE devices SET mobile = '+86139' || lpad(id::text, 8, '0') WHERE registration_id = ANY(\(devices))",
                logger: TestDatabase.logger
            )
            let deadline = ContinuousClock.now + .seconds(10)
            while try await test.count("devices WHERE mobile IS NOT NULL") > 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(try await test.count("devices WHERE mobile IS NOT NULL") == 0)
            #expect(try await test.count("devices WHERE mobile_sealed IS NOT NULL") == 3)
            for rid in devices {
                let shown = try await test.call("GET", "/v3/devices/\(rid)").json["mobile"].string
                #expect(shown?.hasPrefix("+86139") == true, "\(rid): \(String(describing: shown))")
            }
        }
    }
}
