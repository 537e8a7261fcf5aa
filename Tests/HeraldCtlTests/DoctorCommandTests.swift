import Foundation
import HeraldAPNsSandbox
import HeraldCore
import HeraldNodeTesting
import HeraldTestSupport
import Testing

/// `heraldctl doctor` on a whole node with the APNs sandbox: a healthy device, a dead
/// token, a token of the other environment than the app's certificate, and credentials
/// APNs refuses, each explained.
struct DoctorCommandTests {
    private func upload(_ test: CenterCtlTest, environment: APNsEnvironment, certificate: Bool = false) async throws {
        let auth: APNsCredentials.Auth
        if certificate {
            let (pem, key) = try TestCredentials.certificate()
            auth = .certificate(certificatePEM: pem, privateKeyPEM: key)
        } else {
            auth = .token(keyID: "ABC123DEFG", teamID: "DEF123GHIJ", privateKeyPEM: TestCredentials.p8())
        }
        let credentials = APNsCredentials(auth: auth, bundleID: "com.example.app", environment: environment)
        _ = try await test.node.stores.api.apns.setAPNsCredentials(credentials, appKey: test.app.app.appKey)
    }

    private func push(_ test: CenterCtlTest, to registrationID: String) async throws {
        let sent = try await test.node.push(["audience": ["registration_id": [JSON(registrationID)]], "notification": ["alert": "hi"]])
        #expect(sent.status == 200, "\(sent.json)")
        _ = try await test.node.settledReport(sent.msgID)
    }

    @Test func aHealthyDeviceHasNothingWrong() async throws {
        try await CenterCtlTest.run { test in
            try await upload(test, environment: .sandbox)
            let device = try await test.iosDevice()
            try await push(test, to: device.registrationID)
            let result = try await test.heraldctl("doctor", device.registrationID)
            #expect(result.status == 0, "\(result)")
            #expect(result.field("apns_token") == "valid, sandbox")
            #expect(result.stdout.contains("sent_apns"), "\(result)")
            #expect(result.stdout.contains("INFO nothing_wrong"), "\(result)")
            #expect(result.stdout.contains("INFO never_connected"), "\(result)")
        }
    }

    @Test func aDeadTokenAWrongEnvironmentAndRefusedCredentialsAreEachExplained() async throws {
        try await CenterCtlTest.run { test in
            // A dead token: APNs answered 410.
            try await upload(test, environment: .sandbox)
            let gone = try await test.iosDevice()
            // (After the device registered: a token registered again later is valid again.)
            let since = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 1).rounded(.up))
            test.sandbox.markUnregistered(gone.token, since: since)
            try await push(test, to: gone.registrationID)
            let dead = try await test.heraldctl("doctor", gone.registrationID)
            #expect(dead.status == 1, "\(dead)")
            #expect(dead.stdout.contains("PROBLEM token_invalid: APNs said its token is dead since "), "\(dead)")
            // Since APNs' timestamp, not since Herald got the answer.
            #expect(dead.field("apns_token") == "dead since \(ISO8601DateFormatter().string(from: since)), sandbox", "\(dead)")

            // A key APNs refuses.
            let victim = try await test.iosDevice()
            test.sandbox.setFault(.reject(status: 403, reason: "InvalidProviderToken"), forDevice: victim.token)
            try await push(test, to: victim.registrationID)
            let refused = try await test.heraldctl("doctor", victim.registrationID, "--json")
            #expect(refused.status == 1, "\(refused)")
            let findings = try #require(try refused.json["findings"] as? [[String: Any]])
            let codes = findings.compactMap { $0["code"] as? String }
            #expect(codes.contains("credentials_refused") && codes.contains("apns_failed"), "\(codes)")
            let message = findings.first { $0["code"] as? String == "credentials_refused" }?["message"] as? String
            #expect(message?.contains("key id, the team id and the .p8 file") == true, "\(message ?? "")")

            // A production certificate for a device whose token is a sandbox one.
            try await upload(test, environment: .production, certificate: true)
            let developer = try await test.iosDevice()
            let mismatch = try await test.heraldctl("doctor", developer.registrationID)
            #expect(mismatch.status == 1, "\(mismatch)")
            #expect(
                mismatch.stdout.contains("PROBLEM environment_mismatch: its token is a sandbox token but the app's certificate is for production")
            )

            let unknown = try await test.heraldctl("doctor", "0123456789abcdef0123")
            #expect(unknown.status == 1 && unknown.stderr.contains("\(HeraldError.Code.deviceNotFound.rawValue)"), "\(unknown)")
        }
    }

    /// A push forced to the environment the device's token is not from: the doctor says
    /// so, and the token is still valid.
    @Test func aPushToTheWrongEnvironmentIsExplainedAndTheTokenKept() async throws {
        try await CenterCtlTest.run { test in
            try await upload(test, environment: .sandbox)
            let device = try await test.iosDevice()
            // Apple's production environment doesn't know a sandbox token.
            test.sandbox.setFault(.reject(status: 400, reason: "BadDeviceToken"), forDevice: device.token)
            let sent = try await test.node.push([
                "audience": ["registration_id": [JSON(device.registrationID)]], "notification": ["alert": "hi"],
                "options": ["apns_production": true],
            ])
            #expect(sent.status == 200, "\(sent.json)")
            _ = try await test.node.settledReport(sent.msgID)
            let result = try await test.heraldctl("doctor", device.registrationID)
            #expect(result.field("apns_token") == "valid, sandbox", "\(result)")
            #expect(result.stdout.contains("failed (WrongEnvironment)"), "\(result)")
            #expect(result.stdout.contains("WARNING wrong_environment: 1 of its last 1 copies failed: Wrong environment for this token"), "\(result)")
            #expect(!result.stdout.contains("token_invalid"), "\(result)")
        }
    }

    /// A VoIP token APNs answers 410 for is removed, and the doctor says so (not a "dead
    /// since" it doesn't show: the device's APNs token is still valid).
    @Test func aDeadVoIPTokenIsSaidToBeRemoved() async throws {
        try await CenterCtlTest.run { test in
            try await upload(test, environment: .sandbox)
            let device = try await test.iosDevice()
            let voipToken = String(repeating: "9a", count: 32)
            let set = try await test.node.call("POST", "/v3/devices/\(device.registrationID)", ["voip_token": JSON(voipToken)])
            #expect(set.status == 200, "\(set.json)")
            let since = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 1).rounded(.up))
            test.sandbox.markUnregistered(voipToken, since: since)
            let sent = try await test.node.push([
                "audience": ["registration_id": [JSON(device.registrationID)]], "notification": ["voip": ["caller": "Ann"]],
            ])
            #expect(sent.status == 200, "\(sent.json)")
            _ = try await test.node.settledReport(sent.msgID) { $0["apns_failed"].int == 1 }
            let result = try await test.heraldctl("doctor", device.registrationID)
            #expect(result.field("apns_token") == "valid, sandbox", "\(result)")
            #expect(result.stdout.contains("its VoIP token, which APNs said is dead"), "\(result)")
            #expect(result.stdout.contains("Herald removed it"), "\(result)")
            #expect(!result.stdout.contains("since the time shown"), "\(result)")
        }
    }
}
