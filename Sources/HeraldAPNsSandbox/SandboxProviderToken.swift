import Crypto
import Foundation

/// A provider token (JWT) parsed and checked against the registered keys.
struct SandboxProviderToken {
    var keyID: String
    var teamID: String
    var issuedAt: Date

    enum Failure: Error {
        /// Malformed, wrong algorithm, unknown key, wrong team for the key, or bad signature.
        case invalid
    }

    /// Parses `jwt` and verifies its ES256 signature with the key registered under its `kid`.
    init(jwt: String, keys: [String: SandboxState.RegisteredKey]) throws(Failure) {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerData = Data(base64URL: parts[0]),
            let claimsData = Data(base64URL: parts[1]),
            let signatureData = Data(base64URL: parts[2]),
            let header = try? JSONDecoder().decode(Header.self, from: headerData),
            let claims = try? JSONDecoder().decode(Claims.self, from: claimsData),
            header.alg == "ES256",
            let key = keys[header.kid],
            key.teamID == claims.iss,
            let publicKey = key.publicKey,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData)
        else { throw .invalid }
        let signingInput = Data("\(parts[0]).\(parts[1])".utf8)
        guard publicKey.isValidSignature(signature, for: signingInput) else { throw .invalid }
        self.keyID = header.kid
        self.teamID = claims.iss
        self.issuedAt = Date(timeIntervalSince1970: claims.iat)
    }

    private struct Header: Decodable {
        var alg: String
        var kid: String
    }

    /// `iat` must be a JSON number: a string or boolean fails to decode as Double.
    private struct Claims: Decodable {
        var iss: String
        var iat: Double
    }
}

extension Data {
    /// Decodes base64url without padding, as JWTs use it.
    init?<S: StringProtocol>(base64URL: S) {
        var text = base64URL.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text.append("=") }
        self.init(base64Encoded: text)
    }
}
