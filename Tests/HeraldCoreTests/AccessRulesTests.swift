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
