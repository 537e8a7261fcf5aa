import Crypto
import Foundation
import SwiftASN1
import X509

/// Real APNs-shaped credentials made on the spot: a P-256 .p8 key, and a certificate
/// with its private key.
public enum TestCredentials {
    /// The PEM of a new P-256 private key, as in an `AuthKey_XXXXXXXXXX.p8` file.
    public static func p8() -> String {
        P256.Signing.PrivateKey().pemRepresentation
    }

    /// A self-signed certificate valid from `notBefore` to `notAfter`, and its key.
    public static func certificate(
        notBefore: Date = Date().addingTimeInterval(-3600),
        notAfter: Date = Date().addingTimeInterval(86400 * 365)
    ) throws -> (certificate: String, privateKey: String) {
        let key = P256.Signing.PrivateKey()
        let certificateKey = Certificate.PrivateKey(key)
        let name = try DistinguishedName {
            CommonName("Apple Push Services: com.example.app")
            OrganizationName("Herald Tests")
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: certificateKey.publicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: Certificate.Extensions {},
            issuerPrivateKey: certificateKey
        )
        return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
    }

    /// A self-signed server certificate for `dnsName` (a subject alternative name), and its key.
    public static func serverCertificate(dnsName: String = "localhost") throws -> (certificate: String, privateKey: String) {
        let key = P256.Signing.PrivateKey()
        let certificateKey = Certificate.PrivateKey(key)
        let name = try DistinguishedName { CommonName(dnsName) }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: certificateKey.publicKey,
            notValidBefore: Date().addingTimeInterval(-3600),
            notValidAfter: Date().addingTimeInterval(86400),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                SubjectAlternativeNames([.dnsName(dnsName)])
            },
            issuerPrivateKey: certificateKey
        )
        return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
    }
}
