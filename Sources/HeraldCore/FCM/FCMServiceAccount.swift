import Crypto
import Foundation
import _CryptoExtras

/// An app's Firebase service account: the JSON key file Google's console downloads
/// ("Project settings → Service accounts → Generate new private key"), with which Herald
/// asks Google for the access tokens FCM's HTTP v1 API takes.
///
/// Holds secret key material: it is only ever stored sealed (see ``CredentialSealer``)
/// and never rendered into a response; ``summary`` is what operators see.
public struct FCMServiceAccount: Sendable, Codable, Hashable {
    /// The Firebase project the messages are sent in (`projects/{id}/messages:send`).
    public var projectID: String
    /// The service account's email: the assertion's issuer.
    public var clientEmail: String
    /// The key's id: the assertion's `kid`, by which Google finds the public key.
    public var privateKeyID: String
    /// The RSA private key, PEM (PKCS #8 as Google writes it, or PKCS #1).
    public var privateKeyPEM: String
    /// Where the assertion is exchanged for an access token (also its audience).
    public var tokenURI: String

    enum CodingKeys: String, CodingKey {
        case projectID = "project_id"
        case clientEmail = "client_email"
        case privateKeyID = "private_key_id"
        case privateKeyPEM = "private_key"
        case tokenURI = "token_uri"
    }

    public init(projectID: String, clientEmail: String, privateKeyID: String, privateKeyPEM: String, tokenURI: String) {
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.privateKeyID = privateKeyID
        self.privateKeyPEM = privateKeyPEM
        self.tokenURI = tokenURI
    }

    /// Google's token endpoint, where every real service account's `token_uri` points.
    public static let googleTokenURI = "https://oauth2.googleapis.com/token"

    /// The account in a service-account key file, checked the way Google would before
    /// anything is stored: a JSON object of `"type": "service_account"` with every field
    /// Herald signs with, a token endpoint over HTTPS (or on this machine), and an RSA key
    /// of at least 2,048 bits that signs (a signature made and checked with its public half).
    /// `expectedProjectID`: the Firebase project the app is registered in, when the caller
    /// names it; a file for another project is refused.
    ///
    /// Throws ``HeraldError/Code/invalidFCMCredentials`` naming the field at fault.
    public static func parse(_ json: some DataProtocol, expectedProjectID: String? = nil) throws(HeraldError) -> FCMServiceAccount {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any] else {
            throw invalid("service_account: not a JSON object (the key file Firebase's console downloads)")
        }
        guard let type = object["type"] as? String else { throw invalid("type: missing (expected \"service_account\")") }
        guard type == "service_account" else { throw invalid("type: \"\(type)\" is not a service account key") }
        func field(_ name: String) throws(HeraldError) -> String {
            guard let value = object[name] as? String, !value.isEmpty else { throw invalid("\(name): missing") }
            return value
        }
        let account = FCMServiceAccount(
            projectID: try field("project_id"),
            clientEmail: try field("client_email"),
            privateKeyID: try field("private_key_id"),
            privateKeyPEM: try field("private_key"),
            tokenURI: (object["token_uri"] as? String) ?? googleTokenURI
        )
        guard account.projectID.utf8.count <= 100, account.projectID.utf8.allSatisfy(Self.isProjectIDByte) else {
            throw invalid("project_id: \"\(account.projectID)\" is not a Firebase project id")
        }
        if let expectedProjectID, expectedProjectID != account.projectID {
            throw invalid("project_id: the key is for project \"\(account.projectID)\", not \"\(expectedProjectID)\"")
        }
        guard account.clientEmail.contains("@") else { throw invalid("client_email: not an email address") }
        guard let uri = URL(string: account.tokenURI), let host = uri.host,
            uri.scheme == "https" || (uri.scheme == "http" && (host == "127.0.0.1" || host == "localhost" || host == "::1"))
        else {
            throw invalid("token_uri: \"\(account.tokenURI)\" is not an https URL")
        }
        let key: _RSA.Signing.PrivateKey
        do {
            key = try _RSA.Signing.PrivateKey(pemRepresentation: account.privateKeyPEM)
        } catch {
            throw invalid("private_key: not a PEM RSA private key of 2,048 bits or more")
        }
        let probe = Data("herald service account check".utf8)
        guard let signature = try? key.signature(for: probe, padding: .insecurePKCS1v1_5),
            key.publicKey.isValidSignature(signature, for: probe, padding: .insecurePKCS1v1_5)
        else {
            throw invalid("private_key: the key does not sign")
        }
        return account
    }

    /// Firebase project ids: lower-case letters, digits and hyphens (6–30 of them, but older
    /// projects and `google.com:` prefixed ones are longer, so only the bytes are checked).
    private static func isProjectIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: ":"), UInt8(ascii: "_"): true
        default: false
        }
    }

    private static func invalid(_ message: String) -> HeraldError {
        HeraldError(.invalidFCMCredentials, message)
    }

    /// What operators may see: everything but the key.
    public var summary: FCMCredentialsSummary {
        FCMCredentialsSummary(projectID: projectID, clientEmail: clientEmail, privateKeyID: privateKeyID)
    }
}

/// The non-secret description of an app's FCM credentials.
public struct FCMCredentialsSummary: Sendable, Codable, Hashable {
    public var projectID: String
    public var clientEmail: String
    public var privateKeyID: String

    enum CodingKeys: String, CodingKey {
        case projectID = "project_id"
        case clientEmail = "client_email"
        case privateKeyID = "private_key_id"
    }

    public init(projectID: String, clientEmail: String, privateKeyID: String) {
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.privateKeyID = privateKeyID
    }
}
