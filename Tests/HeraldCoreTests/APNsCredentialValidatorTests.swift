import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@Suite struct APNsCredentialValidatorTests {
    @Test func aP256KeyWithAppleIdentifiersIsAccepted() throws {
        let credentials = try APNsCredentialValidator.tokenCredentials(
            keyID: "ABC123DEFG",
            teamID: "TEAM123456",
            privateKeyPEM: TestCredentials.p8(),
            bundleID: "com.example.app",
            environment: .sandbox
        )
        #expect(
            credentials.summary
                == APNsCredentialsSummary(type: .token, bundleID: "com.example.app", environment: .sandbox, keyID: "ABC123DEFG", teamID: "TEAM123456")
        )
    }

    @Test func aKeyThatDoesNotParseIsA422ThatSaysSo() {
        let error = #expect(throws: HeraldError.self) {
            try APNsCredentialValidator.tokenCredentials(
                keyID: "ABC123DEFG",
                teamID: "TEAM123456",
                privateKeyPEM: "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----",
                bundleID: "com.example.app",
                environment: .production
            )
        }
        #expect(error?.code == .invalidAPNsCredentials)
        #expect(error?.code.httpStatus == 422)
        #expect(error?.message.hasPrefix("private_key:") == true)
    }

    @Test func malformedIdentifiersNameTheField() {
        #expect(throws: HeraldError.invalidField("key_id", "must be the 10-character key id Apple shows for the key")) {
            try APNsCredentialValidator.tokenCredentials(
                keyID: "short",
                teamID: "TEAM123456",
                privateKeyPEM: TestCredentials.p8(),
                bundleID: "a.b",
                environment: .production
            )
        }
        #expect(throws: HeraldError.self) {
            try APNsCredentialValidator.tokenCredentials(
                keyID: "ABC123DEFG",
                teamID: "TEAM123456",
                privateKeyPEM: TestCredentials.p8(),
                bundleID: "bad bundle",
                environment: .production
            )
        }
    }

    @Test func aCertificateWithItsKeyIsAcceptedAndSummarised() throws {
        let (certificate, key) = try TestCredentials.certificate()
        let credentials = try APNsCredentialValidator.certificateCredentials(
            certificatePEM: certificate,
            privateKeyPEM: key,
            bundleID: "com.example.app",
            environment: .production
        )
        #expect(credentials.summary.type == .certificate)
        #expect(credentials.summary.certificateSubject?.contains("Apple Push Services") == true)
        #expect(credentials.summary.certificateExpiresAt != nil)
    }

    @Test func aCertificateWithAnotherKeyIsRefused() throws {
        let (certificate, _) = try TestCredentials.certificate()
        let (_, otherKey) = try TestCredentials.certificate()
        #expect(throws: HeraldError(.invalidAPNsCredentials, "private_key: does not belong to the certificate")) {
            try APNsCredentialValidator.certificateCredentials(
                certificatePEM: certificate,
                privateKeyPEM: otherKey,
                bundleID: "a.b",
                environment: .production
            )
        }
    }

    @Test func anExpiredCertificateIsRefused() throws {
        let (certificate, key) = try TestCredentials.certificate(
            notBefore: Date(timeIntervalSinceNow: -86400 * 30),
            notAfter: Date(timeIntervalSinceNow: -86400)
        )
        let error = #expect(throws: HeraldError.self) {
            try APNsCredentialValidator.certificateCredentials(
                certificatePEM: certificate,
                privateKeyPEM: key,
                bundleID: "a.b",
                environment: .production
            )
        }
        #expect(error?.message.hasPrefix("certificate: expired") == true)
    }

    @Test func garbageCertificateIsRefused() {
        #expect(throws: HeraldError(.invalidAPNsCredentials, "certificate: not a PEM-encoded X.509 certificate")) {
            try APNsCredentialValidator.certificateCredentials(
                certificatePEM: "junk",
                privateKeyPEM: TestCredentials.p8(),
                bundleID: "a.b",
                environment: .production
            )
        }
    }
}
