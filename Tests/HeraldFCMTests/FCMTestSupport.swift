import Foundation
import HeraldCore
import _CryptoExtras

/// A service account as Firebase's console downloads it, with a fresh RSA key.
struct TestServiceAccount {
    var json: [String: String]
    var account: FCMServiceAccount

    init(project: String = "herald-test", tokenURI: String = FCMServiceAccount.googleTokenURI, email: String? = nil) throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let email = email ?? "firebase-adminsdk-\(UUID().uuidString.prefix(5).lowercased())@\(project).iam.gserviceaccount.com"
        json = [
            "type": "service_account",
            "project_id": project,
            "private_key_id": String(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()),
            "private_key": key.pkcs8PEMRepresentation,
            "client_email": email,
            "client_id": "1234567890",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": tokenURI,
            "universe_domain": "googleapis.com",
        ]
        account = try FCMServiceAccount.parse(try JSONSerialization.data(withJSONObject: json))
    }

    var data: Data { try! JSONSerialization.data(withJSONObject: json) }
}

/// A token shaped as FCM's are.
func fcmToken(_ n: Int) -> String {
    "fcm\(n):APA91b" + String(repeating: "x", count: 40) + "\(n)"
}
