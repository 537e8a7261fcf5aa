import Crypto
import Foundation
import SwiftASN1
import X509

/// Checks APNs credentials when they are uploaded, so a key that can never work is
/// refused with a reason instead of failing every push later.
public enum APNsCredentialValidator {
    /// Validates a token key (.p8): the PEM must hold a P-256 private key, the key id and
    /// team id must be Apple's 10-character identifiers.
    public static func tokenCredentials(
        keyID: String,
        teamID: String,
        privateKeyPEM: String,
        bundleID: String,
        environment: APNsEnvironment
    ) throws(HeraldError) -> APNsCredentials {
        guard isAppleIdentifier(keyID) else {
            throw .invalidField("key_id", "must be the 10-character key id Apple shows for the key")
        }
        guard isAppleIdentifier(teamID) else {
            throw .invalidField("team_id", "must be the 10-character team id")
        }
        let bundle = try bundleIdentifier(bundleID)
        do {
            _ = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        } catch {
            throw HeraldError(
                .invalidAPNsCredentials,
                "private_key: not a PEM-encoded P-256 private key (the contents of the AuthKey_\(keyID).p8 file)"
            )
        }
        return APNsCredentials(
            auth: .token(keyID: keyID, teamID: teamID, privateKeyPEM: privateKeyPEM),
            bundleID: bundle,
            environment: environment
        )
    }

    /// Validates certificate credentials: the certificate must parse, be valid now, and
    /// the private key must be the certificate's.
    public static func certificateCredentials(
        certificatePEM: String,
        privateKeyPEM: String,
        bundleID: String,
        environment: APNsEnvironment,
        now: Date = Date()
    ) throws(HeraldError) -> APNsCredentials {
        let bundle = try bundleIdentifier(bundleID)
        let certificate: Certificate
        do {
            certificate = try Certificate(pemEncoded: certificatePEM)
        } catch {
            throw HeraldError(.invalidAPNsCredentials, "certificate: not a PEM-encoded X.509 certificate")
        }
        let key: Certificate.PrivateKey
        do {
            key = try Certificate.PrivateKey(pemEncoded: privateKeyPEM)
        } catch {
            throw HeraldError(.invalidAPNsCredentials, "private_key: not an unencrypted PEM private key (RSA or EC)")
        }
        guard key.publicKey == certificate.publicKey else {
            throw HeraldError(.invalidAPNsCredentials, "private_key: does not belong to the certificate")
        }
        guard certificate.notValidAfter > now else {
            throw HeraldError(.invalidAPNsCredentials, "certificate: expired on \(certificate.notValidAfter.ISO8601Format())")
        }
        guard certificate.notValidBefore <= now else {
            throw HeraldError(.invalidAPNsCredentials, "certificate: not valid before \(certificate.notValidBefore.ISO8601Format())")
        }
        return APNsCredentials(
            auth: .certificate(certificatePEM: certificatePEM, privateKeyPEM: privateKeyPEM),
            bundleID: bundle,
            environment: environment
        )
    }

    /// Subject and expiry of a PEM certificate.
    public static func certificateDetails(_ pem: String) throws -> (subject: String, notValidAfter: Date) {
        let certificate = try Certificate(pemEncoded: pem)
        return (certificate.subject.description, certificate.notValidAfter)
    }

    static func isAppleIdentifier(_ value: String) -> Bool {
        value.utf8.count == 10 && value.utf8.allSatisfy { $0.isASCIIAlphanumeric }
    }

    static func bundleIdentifier(_ value: String) throws(HeraldError) -> String {
        let allowed = value.utf8.allSatisfy { $0.isASCIIAlphanumeric || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
        guard !value.isEmpty, value.utf8.count <= 155, allowed, !value.hasPrefix("."), !value.hasSuffix(".") else {
            throw .invalidField("bundle_id", "must be the app's bundle identifier, e.g. com.example.app")
        }
        return value
    }
}

extension UInt8 {
    var isASCIIAlphanumeric: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
            || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
    }
}
