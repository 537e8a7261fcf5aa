import Crypto
import Foundation
import HeraldCore
import Testing

/// Roles, the two-person rule and password hashes (issue #30): each rule as a table.
@Suite struct AccessRulesTests {
    @Test func eachRoleHoldsTheOneBelowItAndMore() {
        #expect(Role.viewer.scopes == [.devicesRead, .reportsRead])
        #expect(Role.author.scopes == [.devicesRead, .reportsRead, .compose])
        #expect(Role.operator.scopes.isSuperset(of: Role.author.scopes) && Role.operator.scopes.contains(.send))
        #expect(!Role.operator.scopes.contains(.settings) && !Role.operator.scopes.contains(.keys))
        #expect(Role.admin.scopes == Set(Scope.allCases))
        #expect(Role.allCases.filter(\.approves) == [.operator, .admin])
        // send holds compose; nothing else is implied.
        #expect(Set([Scope.send]).grants(.compose))
        #expect(!Set([Scope.compose]).grants(.send))
        #expect(!Set([Scope.reportsRead]).grants(.compose))
    }

    @Test(arguments: [
        // (scopes, person, threshold, audience) → decision
        (Set(Scope.allCases), false, Int64?.none, Int64?.none, ApprovalRule.Decision.send),  // master secret
        (Set(Scope.allCases), false, 10, 1_000, .send),  // a key: machines are not held
        (Set([Scope.compose]), false, nil, 5, .awaitApproval),  // a drafting key
        (Role.author.scopes, true, nil, 1, .awaitApproval),  // an author, rule off
        (Role.operator.scopes, true, nil, 1_000_000, .send),  // rule off
        (Role.operator.scopes, true, 10, 10, .send),  // at the threshold
        (Role.operator.scopes, true, 10, 11, .awaitApproval),  // past it
        (Role.admin.scopes, true, 0, 1, .awaitApproval),  // 0: every push by a person
    ])
    func theTwoPersonRule(scopes: Set<Scope>, isPerson: Bool, threshold: Int64?, audience: Int64?, expected: ApprovalRule.Decision) {
        #expect(ApprovalRule.decide(scopes: scopes, isPerson: isPerson, threshold: threshold, audienceSize: audience) == expected)
    }

    @Test func anotherPersonWhoseRoleApprovesApproves() {
        #expect(ApprovalRule.mayApprove(approverUserID: 2, role: .operator, composerUserID: 1))
        #expect(ApprovalRule.mayApprove(approverUserID: 2, role: .admin, composerUserID: nil))  // a key composed it
        #expect(!ApprovalRule.mayApprove(approverUserID: 1, role: .admin, composerUserID: 1))  // its composer
        #expect(!ApprovalRule.mayApprove(approverUserID: 2, role: .author, composerUserID: 1))
        #expect(!ApprovalRule.mayApprove(approverUserID: nil, role: .admin, composerUserID: 1))  // not a person
        #expect(!ApprovalRule.mayApprove(approverUserID: 2, role: nil, composerUserID: 1))
    }

    @Test func aPasswordHashVerifiesItsPasswordOnly() throws {
        let cheap = PasswordHash(logN: 10, blockSize: 8, parallelism: 1)
        let stored = try cheap.hash("correct horse battery")
        #expect(stored.hasPrefix("scrypt$10$8$1$"))
        #expect(PasswordHash.verify("correct horse battery", stored: stored))
        #expect(!PasswordHash.verify("correct horse batterY", stored: stored))
        #expect(try cheap.hash("correct horse battery") != stored)  // salted
        for malformed in ["", "scrypt$10$8$1$", "bcrypt$10$8$1$AAAA$AAAA", "scrypt$40$8$1$AAAA$" + String(repeating: "A", count: 44)] {
            #expect(!PasswordHash.verify("x", stored: malformed), "\(malformed)")
        }
        #expect(PasswordHash.verify("pw-standard-cost", stored: try PasswordHash.standard.hash("pw-standard-cost")))
    }
}

/// An ID token signed with ES256 (the verifier's other algorithm), and the claims it
/// checks that the fake provider's tests don't reach.
@Suite struct IDTokenVerifierTests {
    static func token(_ key: P256.Signing.PrivateKey, claims: [String: Any], kid: String = "ec-1") throws -> String {
        let header = Base64URL.encode(try JSONSerialization.data(withJSONObject: ["alg": "ES256", "kid": kid]))
        let payload = Base64URL.encode(try JSONSerialization.data(withJSONObject: claims))
        let signature = try key.signature(for: Data("\(header).\(payload)".utf8))
        return "\(header).\(payload).\(Base64URL.encode(signature.rawRepresentation))"
    }

    @Test func anES256TokenVerifiesAndItsClaimsAreChecked() throws {
        let key = P256.Signing.PrivateKey()
        let point = key.publicKey.x963Representation
        var jwk = JSONWebKey(kty: "EC", kid: "ec-1", alg: "ES256", use: "sig")
        jwk.crv = "P-256"
        jwk.x = Base64URL.encode(point[1..<33])
        jwk.y = Base64URL.encode(point[33..<65])
        let keys = JSONWebKeySet(keys: [jwk])
        let now = Date(timeIntervalSince1970: 2_000_000_000)
        let good: [String: Any] = [
            "iss": "https://id.example.com", "aud": ["herald", "other"], "azp": "herald", "sub": "42", "exp": 2_000_000_300,
            "iat": 2_000_000_000, "nonce": "n-1", "email": "Ops@Example.com", "email_verified": true,
        ]
        let claims = try IDTokenVerifier.verify(
            try Self.token(key, claims: good),
            keys: keys,
            issuer: "https://id.example.com",
            clientID: "herald",
            nonce: "n-1",
            now: now
        )
        #expect(claims.identity == "https://id.example.com 42" && claims.email == "ops@example.com" && claims.emailVerified)

        func failure(_ change: (inout [String: Any]) -> Void, kid: String = "ec-1") throws -> IDTokenVerifier.Failure? {
            var claims = good
            change(&claims)
            do {
                _ = try IDTokenVerifier.verify(
                    try Self.token(key, claims: claims, kid: kid),
                    keys: keys,
                    issuer: "https://id.example.com",
                    clientID: "herald",
                    nonce: "n-1",
                    now: now
                )
                return nil
            } catch {
                return error as? IDTokenVerifier.Failure
            }
        }
        #expect(try failure { $0["iss"] = "https://evil.example.com" } == .wrongIssuer)
        #expect(try failure { $0["azp"] = "other" } == .wrongAudience)
        #expect(try failure { $0["aud"] = "other" } == .wrongAudience)
        #expect(try failure { $0["iat"] = 2_000_001_000 } == .expired)  // issued in the future
        #expect(try failure { $0["nonce"] = nil } == .wrongNonce)
        #expect(try failure({ _ in }, kid: "rotated") == .unknownKey("rotated"))
        #expect(
            throws: IDTokenVerifier.Failure.malformed,
            performing: { try IDTokenVerifier.verify("a.b", keys: keys, issuer: "i", clientID: "c", nonce: "n", now: now) }
        )
    }
}
