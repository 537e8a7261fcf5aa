import Foundation
import HeraldAPNsSandbox
import HeraldCore
import HeraldKit
import HeraldNodeTesting
import HeraldTestSupport
import Testing

/// A push that asks for an APNs environment (`options.apns_production`) other than its
/// device's: JPush's clients send `false` by default, and APNs' development environment
/// answers BadDeviceToken for every production token.
@Suite struct APNsEnvironmentTests {
    /// The sandbox plays APNs' development environment, which doesn't know a production
    /// token: the push forced there fails with Herald's reason, and the token stays valid.
    @Test func aBadDeviceTokenFromTheEnvironmentThePushForcedKeepsTheToken() async throws {
        try await Self.withDevelopmentAPNs { test in
            let token = TestNode.token(1200)
            test.sandbox.registerDevice(token, topic: "dev.herald.app\(test.appID)", environment: .production)
            let device = try await HeraldAPIClient(baseURL: test.apiURL, appKey: test.appKey)
                .register(platform: "ios", apnsToken: token, apnsEnvironment: "production")
            let sent = try await test.push([
                "audience": ["registration_id": [JSON(device.registrationID)]],
                "notification": ["alert": "to the wrong environment"],
                "options": ["apns_production": false],
            ])
            let report = try await test.settledReport(sent.msgID) { $0["apns_failed"].int == 1 }
            #expect(report["apns_failed"].int == 1)
            #expect(report["apns_failures"][0]["reason"].string == "WrongEnvironment")
            // APNs did refuse it (the sandbox saw the request).
            #expect(test.sandbox.rejections.contains { $0.reason == "BadDeviceToken" })

            let status = try await test.call(
                "POST",
                "/v3/report/status/message",
                ["msg_id": JSON(sent.msgID), "registration_ids": [JSON(device.registrationID)]]
            )
            #expect(status.json["statuses"][device.registrationID]["status"].string == "failed")
            #expect(status.json["statuses"][device.registrationID]["apns_reason"].string == "WrongEnvironment")

            let stored = try await test.stores.api.devices.find(appID: test.appID, registrationID: device.registrationID)
            #expect(stored?.tokenValid == true)

            let findings = try await test.call("GET", "/v3/devices/\(device.registrationID)/diagnosis").json["findings"].array ?? []
            #expect(!findings.contains { $0["code"].string == "token_invalid" })
            let wrong = findings.first { $0["code"].string == "wrong_environment" }
            #expect(wrong?["message"].string?.contains("Wrong environment for this token") == true)
        }
    }

    /// The same refusal in the device's own environment still means the token is bad.
    @Test func aBadDeviceTokenFromTheDevicesOwnEnvironmentInvalidatesIt() async throws {
        try await Self.withDevelopmentAPNs { test in
            let token = TestNode.token(1201)
            // Registered with Herald as a development token, but APNs knows it as production.
            test.sandbox.registerDevice(token, topic: "dev.herald.app\(test.appID)", environment: .production)
            let device = try await test.register(token: token)
            let sent = try await test.push([
                "audience": ["registration_id": [JSON(device.registrationID)]],
                "notification": ["alert": "to its own environment"],
                "options": ["apns_production": false],
            ])
            let report = try await test.settledReport(sent.msgID) { $0["apns_failed"].int == 1 }
            #expect(report["apns_failures"][0]["reason"].string == "BadDeviceToken")
            let stored = try await test.stores.api.devices.find(appID: test.appID, registrationID: device.registrationID)
            #expect(stored?.tokenValid == false)
        }
    }

    /// A node whose APNs sandbox plays only the development environment, as Apple's
    /// development host does.
    private static func withDevelopmentAPNs(_ body: @Sendable @escaping (TestNode) async throws -> Void) async throws {
        try await TestDatabase.withDatabase { url in
            var configuration = APNsSandbox.Configuration(transport: .plaintext)
            configuration.environment = .sandbox
            let sandbox = try await APNsSandbox.start(configuration: configuration)
            do {
                try await TestNode.run(on: url, sandbox: sandbox, app: nil, body)
                await sandbox.shutdown()
            } catch {
                await sandbox.shutdown()
                throw error
            }
        }
    }
}
