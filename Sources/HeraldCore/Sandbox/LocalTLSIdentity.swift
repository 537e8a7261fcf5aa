import Crypto
import Foundation
import SwiftASN1
import X509

/// A local sandbox's own TLS identity (the APNs and FCM sandboxes): a self-signed
/// certificate for localhost and 127.0.0.1, made at start, for its clients to trust.
public struct LocalTLSIdentity: Sendable {
    public var certificatePEM: String
    public var privateKeyPEM: String

    public static func make(organization: String, now: Date = Date()) throws -> LocalTLSIdentity {
        let key = P256.Signing.PrivateKey()
        let certificateKey = Certificate.PrivateKey(key)
        let name = try DistinguishedName {
            CommonName("localhost")
            OrganizationName(organization)
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: certificateKey.publicKey,
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(86400 * 30),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                KeyUsage(digitalSignature: true, keyCertSign: true)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: certificateKey
        )
        return LocalTLSIdentity(certificatePEM: try certificate.serializeAsPEM().pemString, privateKeyPEM: key.pemRepresentation)
    }
}
