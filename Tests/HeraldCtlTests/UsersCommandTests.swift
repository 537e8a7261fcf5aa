import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// `heraldctl users`: a user created with a generated password that signs in, given a role
/// on an app, listed, disabled.
@Suite struct UsersCommandTests {
    @Test func aUserIsCreatedGivenARoleListedAndDisabled() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let admin = ["HERALD_ADMIN_TOKEN": CtlTest.adminToken]
            let created = try await test.heraldctl(["users", "create", "dev@example.com", "--name", "Dev"], environment: admin)
            #expect(created.status == 0, "\(created)")
            let password = try #require(created.field("password")?.split(separator: " ").first.map(String.init))
            #expect(password.count == 20)

            let role = try await test.heraldctl(["users", "role", "dev@example.com", "--app", app.app.appKey, "operator"], environment: admin)
            #expect(role.status == 0 && role.field("apps") == "\(app.app.appKey)=operator", "\(role)")
            let listed = try await test.heraldctl(["users", "list"], environment: admin)
            #expect(listed.status == 0 && listed.stdout.contains("dev@example.com") && listed.stdout.contains("active"), "\(listed)")
            let badRole = try await test.heraldctl(["users", "role", "dev@example.com", "--app", app.app.appKey, "boss"], environment: admin)
            #expect(badRole.status == 64, "\(badRole)")

            // The generated password is the one stored (hashed).
            let stored = try #require(try await test.store.api.people.passwordHash(email: "dev@example.com"))
            #expect(PasswordHash.verify(password, stored: stored.hash))
            let disabled = try await test.heraldctl(["users", "disable", "dev@example.com"], environment: admin)
            #expect(disabled.status == 0, "\(disabled)")
            #expect(try await test.store.api.people.passwordHash(email: "dev@example.com") == nil)
            let none = try await test.heraldctl(["users", "role", "nobody@example.com", "--app", app.app.appKey, "viewer"], environment: admin)
            #expect(none.status != 0 && none.stderr.contains("no user"), "\(none)")
        }
    }
}
