import Crypto
import Foundation
import HeraldCore
import Testing
import _CryptoExtras

/// A service-account key file is checked before anything is stored: each way it can be
/// wrong is refused with `invalid_fcm_credentials`, naming the field at fault.
@Suite struct FCMServiceAccountTests {
    func refusal(_ json: [String: String], project: String? = nil) -> String? {
        do {
            _ = try FCMServiceAccount.parse(try! JSONSerialization.data(withJSONObject: json), expectedProjectID: project)
            return nil
        } catch {
            #expect(error.code == .invalidFCMCredentials)
            return error.message
        }
    }

    @Test func aKeyFileAsFirebaseWritesItIsTaken() throws {
        let file = try TestServiceAccount(project: "shop-7f3a2")
        let account = try FCMServiceAccount.parse(file.data, expectedProjectID: "shop-7f3a2")
        #expect(account.projectID == "shop-7f3a2")
        #expect(account.tokenURI == FCMServiceAccount.googleTokenURI)
        #expect(account.summary.clientEmail == file.json["client_email"])
    }

    @Test func eachWayItCanBeWrong() throws {
        let good = try TestServiceAccount().json
        func with(_ key: String, _ value: String?) -> [String: String] {
            var json = good
            json[key] = value
            return json
        }
        #expect(refusal(good, project: "another-project")?.contains("not \"another-project\"") == true)
        #expect(refusal(with("type", "authorized_user"))?.hasPrefix("type:") == true)
        #expect(refusal(with("type", nil))?.hasPrefix("type:") == true)
        #expect(refusal(with("private_key", nil))?.hasPrefix("private_key: missing") == true)
        #expect(refusal(with("client_email", nil))?.hasPrefix("client_email") == true)
        #expect(refusal(with("project_id", "Bad Project!"))?.hasPrefix("project_id") == true)
        #expect(refusal(with("token_uri", "http://example.com/token"))?.hasPrefix("token_uri") == true)
        // Not RSA, too short, or not a key at all: it can't sign an assertion.
        #expect(refusal(with("private_key", P256.Signing.PrivateKey().pemRepresentation))?.hasPrefix("private_key") == true)
        let short = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024))
        #expect(refusal(with("private_key", short.pkcs8PEMRepresentation))?.hasPrefix("private_key") == true)
        let truncated = String(good["private_key"]!.prefix(400)) + "\n-----END PRIVATE KEY-----\n"
        #expect(refusal(with("private_key", truncated))?.hasPrefix("private_key") == true)
        do {
            _ = try FCMServiceAccount.parse(Data("[1,2]".utf8))
            Issue.record("an array was taken")
        } catch {
            #expect(error.code == .invalidFCMCredentials)
        }
    }

    @Test func theAssertionIsWhatGoogleTakes() throws {
        let account = try TestServiceAccount().account
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let jwt = try FCMAssertion.sign(account, issuedAt: now)
        let parts = jwt.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let header = try JSONSerialization.jsonObject(with: Base64URL.decode(parts[0])!) as! [String: Any]
        let claims = try JSONSerialization.jsonObject(with: Base64URL.decode(parts[1])!) as! [String: Any]
        #expect(header["alg"] as? String == "RS256")
        #expect(header["kid"] as? String == account.privateKeyID)
        #expect(claims["iss"] as? String == account.clientEmail)
        #expect(claims["aud"] as? String == account.tokenURI)
        #expect(claims["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging")
        #expect(claims["iat"] as? Int == 1_800_000_000)
        #expect(claims["exp"] as? Int == 1_800_003_600)
        let key = try _RSA.Signing.PrivateKey(pemRepresentation: account.privateKeyPEM).publicKey
        let signature = _RSA.Signing.RSASignature(rawRepresentation: Base64URL.decode(parts[2])!)
        #expect(key.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8), padding: .insecurePKCS1v1_5))
    }
}
