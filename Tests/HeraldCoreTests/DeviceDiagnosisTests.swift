import Foundation
import HeraldCore
import Testing

/// Each finding of a device's diagnosis, from facts alone.
struct DeviceDiagnosisTests {
    private func codes(_ facts: DeviceDiagnosis.Facts) -> [String] { DeviceDiagnosis(facts).findings.map(\.code) }

    private let credentials = APNsCredentialsSummary(type: .token, bundleID: "com.example.app", environment: .sandbox, keyID: "K", teamID: "T")

    @Test func anAndroidDeviceThatNeverConnectedIsOnlyInfo() {
        let findings = DeviceDiagnosis(.init(platform: .android, hasAPNsToken: false, tokenValid: true)).findings
        #expect(findings.map(\.code) == ["no_fcm_token", "never_connected", "no_copies", "nothing_wrong"])
        #expect(findings.allSatisfy { $0.level == .info })
    }

    @Test func anAndroidDeviceWithAnFCMToken() {
        var facts = DeviceDiagnosis.Facts(platform: .android, hasAPNsToken: false, tokenValid: true, lastOnlineAt: Date())
        facts.hasFCMToken = true
        #expect(codes(facts).first == "no_fcm_credentials")
        facts.fcmCredentials = FCMCredentialsSummary(projectID: "shop", clientEmail: "a@shop.iam.gserviceaccount.com", privateKeyID: "k")
        #expect(codes(facts) == ["offline", "no_copies", "nothing_wrong"])
        #expect(DeviceDiagnosis(facts).findings[0].message.hasSuffix("and go to FCM"))
        facts.fcmProblem = "THIRD_PARTY_AUTH_ERROR"
        #expect(codes(facts).first == "fcm_credentials_refused")
        facts.fcmProblem = nil
        facts.recent = [DeviceDiagnosis.Copy(msgID: "1", sentAt: Date(), status: "failed", reason: "UNREGISTERED")]
        let failed = DeviceDiagnosis(facts).findings.first { $0.code == "fcm_failed" }
        #expect(failed?.level == .problem)
        #expect(failed?.message.contains("failed at FCM with UNREGISTERED") == true)
        #expect(!codes(facts).contains("apns_failed"))
    }

    @Test func anIOSDeviceWithoutATokenOrCredentials() {
        #expect(codes(.init(platform: .ios, hasAPNsToken: false, tokenValid: true)).first == "no_apns_token")
        #expect(codes(.init(platform: .ios, hasAPNsToken: true, tokenValid: true)).first == "no_apns_credentials")
        var sandbox = DeviceDiagnosis.Facts(platform: .ios, hasAPNsToken: true, tokenValid: true)
        sandbox.toSandbox = true
        #expect(codes(sandbox).first == "apns_sandbox")
    }

    @Test func aTokenEnvironmentOnlyMattersForACertificate() {
        var facts = DeviceDiagnosis.Facts(
            platform: .ios,
            hasAPNsToken: true,
            tokenValid: true,
            tokenEnvironment: .production,
            credentials: credentials
        )
        #expect(!codes(facts).contains("environment_mismatch"), "a .p8 key works in both environments")
        facts.credentials?.type = .certificate
        #expect(codes(facts).contains("environment_mismatch"))
    }

    @Test func heldDroppedAndFailedCopiesAreCountedByReason() {
        let now = Date()
        let facts = DeviceDiagnosis.Facts(
            platform: .ios,
            hasAPNsToken: true,
            tokenValid: true,
            node: "node-1",
            credentials: credentials,
            recent: [
                .init(msgID: "1", sentAt: now, status: "held"), .init(msgID: "2", sentAt: now, status: "dropped", reason: "DailyCap"),
                .init(msgID: "3", sentAt: now, status: "dropped", reason: "QuietHours"),
                .init(msgID: "4", sentAt: now, status: "failed", reason: "PayloadTooLarge"),
                .init(msgID: "5", sentAt: now, status: "failed", reason: "PayloadTooLarge"),
            ]
        )
        let findings = DeviceDiagnosis(facts).findings
        #expect(findings.map(\.code) == ["online", "apns_failed", "held", "dropped_quiet_hours", "dropped_daily_cap"])
        #expect(findings[1].message.hasPrefix("2 of its last 5 copies failed at APNs with PayloadTooLarge"))
    }

    /// A push forced to the other APNs environment says so, as a warning: the token is fine.
    @Test func aWrongEnvironmentFailureIsAWarningThatSaysSo() {
        let now = Date()
        let facts = DeviceDiagnosis.Facts(
            platform: .ios,
            hasAPNsToken: true,
            tokenValid: true,
            tokenEnvironment: .production,
            node: "node-1",
            credentials: credentials,
            recent: [
                .init(msgID: "1", sentAt: now, status: "failed", reason: APNsAdvice.wrongEnvironment),
                .init(msgID: "2", sentAt: now, status: "sent_apns"),
            ]
        )
        let findings = DeviceDiagnosis(facts).findings
        #expect(findings.map(\.code) == ["online", "wrong_environment"])
        #expect(findings[1].level == .warning)
        #expect(findings[1].message.hasPrefix("1 of its last 2 copies failed: Wrong environment for this token"))
        #expect(findings[1].message.contains("production token"))
    }

    /// A copy Herald didn't send because APNs refused the app's credentials is explained
    /// as that, not as a reason from Apple's table.
    @Test func aCopyNotSentForRefusedCredentialsSaysWhy() {
        let facts = DeviceDiagnosis.Facts(
            platform: .ios,
            hasAPNsToken: true,
            tokenValid: true,
            credentials: credentials,
            credentialsProblem: "InvalidProviderToken",
            recent: [.init(msgID: "1", sentAt: Date(), status: "failed", reason: "CredentialsRefused")]
        )
        let failed = DeviceDiagnosis(facts).findings.first { $0.code == "apns_failed" }
        #expect(failed?.message.contains("Not sent: APNs had refused the app's credentials") == true, "\(String(describing: failed))")
    }

    /// A 410 while the device's APNs token is valid was its VoIP token's (removed): said
    /// so, without promising a "dead since" that isn't shown.
    @Test func aDeadVoIPTokenIsSaidToBeRemoved() {
        var facts = DeviceDiagnosis.Facts(
            platform: .ios,
            hasAPNsToken: true,
            tokenValid: true,
            credentials: credentials,
            recent: [.init(msgID: "1", sentAt: Date(), status: "failed", reason: "Unregistered")]
        )
        var message = DeviceDiagnosis(facts).findings.first { $0.code == "apns_failed" }?.message ?? ""
        #expect(message.contains("VoIP token") && message.contains("Herald removed it"), "\(message)")
        #expect(!message.contains("since the time shown"), "\(message)")
        facts.hasVoIPToken = true
        message = DeviceDiagnosis(facts).findings.first { $0.code == "apns_failed" }?.message ?? ""
        #expect(message.contains("registered a valid one since"), "\(message)")
        // A dead APNs token keeps the advice that points at its time.
        facts.tokenValid = false
        message = DeviceDiagnosis(facts).findings.first { $0.code == "apns_failed" }?.message ?? ""
        #expect(message.contains("since the time shown"), "\(message)")
    }
}
