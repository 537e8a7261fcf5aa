import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldFCMSandbox
import NIOCore
import NIOSSL
import Testing
import _CryptoExtras

/// The sandbox's token endpoint checks each assertion as Google does: one row per way an
/// assertion can be wrong, each refused; the right one gets a token.
@Suite struct FCMSandboxTokenEndpointTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var header: [String: String] = [:]
        var claims: [String: Int] = [:]
        var stringClaims: [String: String] = [:]
        var otherKey = false
        var expected: String?
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "the right assertion", expected: nil),
        Row(name: "Google's audience (google-auth's)", stringClaims: ["aud": FCMServiceAccount.googleTokenURI], expected: nil),
        Row(name: "another audience", stringClaims: ["aud": "https://example.com/token"], expected: "invalid_grant"),
        Row(name: "another scope", stringClaims: ["scope": "https://www.googleapis.com/auth/cloud-platform"], expected: "invalid_scope"),
        Row(name: "valid for two hours", claims: ["exp": 7200], expected: "invalid_grant"),
        Row(name: "expired", claims: ["iat": -7200, "exp": -3600], expected: "invalid_grant"),
        Row(name: "issued an hour from now", claims: ["iat": 3600, "exp": 7200], expected: "invalid_grant"),
        Row(name: "another key id", header: ["kid": "0000"], expected: "invalid_grant"),
        Row(name: "HS256", header: ["alg": "HS256"], expected: "invalid_grant"),
        Row(name: "signed with another key", otherKey: true, expected: "invalid_grant"),
        Row(name: "an unknown issuer", stringClaims: ["iss": "nobody@example.iam.gserviceaccount.com"], expected: "invalid_grant"),
    ]

    @Test(arguments: rows) func eachAssertion(_ row: Row) async throws {
        let sandbox = try await FCMSandbox.start()
        let (_, account) = try FCMSandbox.keyFile(project: "herald-test", tokenURI: sandbox.tokenURL)
        try sandbox.admit(account)
        let now = Int(Date().timeIntervalSince1970)
        var header: [String: String] = ["alg": "RS256", "typ": "JWT", "kid": account.privateKeyID]
        header.merge(row.header) { $1 }
        var claims: [String: Any] = [
            "iss": account.clientEmail, "aud": account.tokenURI, "scope": FCMAssertion.scope, "iat": now, "exp": now + 3600,
        ]
        for (key, value) in row.stringClaims { claims[key] = value }
        for (key, offset) in row.claims { claims[key] = now + offset }
        let input =
            Base64URL.encode(try JSONSerialization.data(withJSONObject: header)) + "."
            + Base64URL.encode(try JSONSerialization.data(withJSONObject: claims))
        let key =
            row.otherKey
            ? try _RSA.Signing.PrivateKey(keySize: .bits2048) : try _RSA.Signing.PrivateKey(pemRepresentation: account.privateKeyPEM)
        let assertion = input + "." + Base64URL.encode(try key.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5).rawRepresentation)

        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(sandbox.certificatePEM.utf8), format: .pem)])
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        var request = HTTPClientRequest(url: sandbox.tokenURL)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: FCMAssertion.tokenRequestBody(assertion: assertion)))
        let response = try await http.execute(request, timeout: .seconds(10))
        let body = try JSONSerialization.jsonObject(with: Data(try await response.body.collect(upTo: 1 << 16).readableBytesView)) as? [String: Any]
        try await http.shutdown()
        await sandbox.shutdown()
        if let expected = row.expected {
            #expect(response.status.code == 400)
            #expect(body?["error"] as? String == expected, "\(body ?? [:])")
        } else {
            #expect(response.status.code == 200)
            #expect((body?["access_token"] as? String)?.isEmpty == false)
        }
    }
}
