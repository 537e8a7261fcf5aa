import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import PostgresNIO
import Testing

/// People (issue #30): console users with roles per app and for the instance, sessions,
/// sign-in throttled and audited, their password again before destructive actions, and
/// the two-person rule.
@Suite struct PeopleTests {
    static let password = "correct horse battery"

    /// Creates a user through the admin API, with a role on `app` when given.
    @discardableResult
    static func user(
        _ api: APITest,
        _ email: String,
        instanceRole: String? = nil,
        role: String? = nil,
        on app: TestApp? = nil
    ) async throws
        -> [String: Any]
    {
        let roleField = instanceRole.map { #", "instance_role": "\#($0)""# } ?? ""
        let created = try await api.send(
            .post,
            "/admin/v1/users",
            auth: .admin,
            json: #"{"email": "\#(email)", "password": "\#(password)"\#(roleField)}"#
        )
        #expect(created.status == 201, "\(created.body)")
        if let role, let app {
            let given = try await api.send(.put, "/admin/v1/users/\(email)/apps/\(app.appKey)", auth: .admin, json: #"{"role": "\#(role)"}"#)
            #expect(given.status == 200, "\(given.body)")
            return try given.json
        }
        return try created.json
    }

    /// Signs in; returns the session's token.
    static func signIn(_ api: APITest, _ email: String, password: String = password) async throws -> String {
        let reply = try await api.send(.post, "/auth/v1/sessions", auth: .basic(email, password))
        #expect(reply.status == 201, "\(reply.body)")
        return try reply.string("token")
    }

    static func pushBody(_ audience: String) -> String {
        #"{"platform": "all", "audience": \#(audience), "notification": {"alert": "hello"}}"#
    }

    @Test func eachRoleMayDoWhatItHoldsOnItsOwnAppsOnly() async throws {
        try await APITest.run { api in
            let app = try await api.createApp("Alpha")
            let other = try await api.createApp("Beta")
            let device = try await api.registerDevice(app, apnsToken: randomAPNsToken())
            let push = Self.pushBody(#"{"registration_id": ["\#(device.registrationID)"]}"#)
            let viewerUser = try await Self.user(api, "viewer@example.com", role: "viewer", on: app)
            #expect((viewerUser["app_roles"] as? [String: String])?[app.appKey] == "viewer", "\(viewerUser)")
            try await Self.user(api, "operator@example.com", role: "operator", on: app)
            try await Self.user(api, "root@example.com", instanceRole: "admin")

            let viewer = try await Self.signIn(api, "viewer@example.com")
            #expect(viewer.hasPrefix("hks_"))
            #expect(try await api.send(.get, "/v3/devices/\(device.registrationID)", auth: .basic(app.appKey, viewer)).status == 200)
            let refused = try await api.send(.post, "/v3/push", auth: .basic(app.appKey, viewer), json: push)
            #expect(refused.status == 403 && refused.errorMessage?.contains("(viewer) lacks the scope send") == true, "\(refused.body)")
            let elsewhere = try await api.send(.get, "/v3/devices/\(device.registrationID)", auth: .basic(other.appKey, viewer))
            #expect(elsewhere.status == 403 && elsewhere.errorMessage?.contains("has no role on app") == true, "\(elsewhere.body)")
            #expect(try await api.send(.get, "/admin/v1/apps", auth: .bearer(viewer)).status == 403)

            let operatorToken = try await Self.signIn(api, "operator@example.com")
            let sent = try await api.send(.post, "/v3/push", auth: .basic(app.appKey, operatorToken), json: push)
            #expect(sent.status == 200 && (try? sent.string("msg_id")) != nil, "\(sent.body)")
            let settings = try await api.send(.get, "/v3/keys", auth: .basic(app.appKey, operatorToken))
            #expect(settings.status == 403 && settings.errorMessage?.contains("lacks the scope keys") == true, "\(settings.body)")

            // An instance admin: the admin API, and every app.
            let root = try await Self.signIn(api, "root@example.com")
            #expect(try await api.send(.get, "/admin/v1/apps", auth: .bearer(root)).status == 200)
            #expect(try await api.send(.get, "/v3/keys", auth: .basic(other.appKey, root)).status == 200)
            let me = try await api.send(.get, "/auth/v1/session", auth: .bearer(root))
            let meUser = try me.json["user"] as? [String: Any]
            #expect(me.status == 200 && meUser?["instance_role"] as? String == "admin", "\(me.body)")

            // Every change is in the audit log under the person's name.
            let audit = try await api.send(.get, "/admin/v1/audit?app_key=\(app.appKey)", auth: .admin)
            let actors = (try audit.json["entries"] as? [[String: Any]] ?? []).map {
                "\($0["actor"] ?? "") \($0["action"] ?? "") \($0["status"] ?? "")"
            }
            #expect(actors.contains("user:operator@example.com POST /v3/push 200"), "\(actors)")
            #expect(actors.contains("user:viewer@example.com POST /v3/push 403"), "\(actors)")
        }
    }

    @Test func signInsAreThrottledAuditedAndSessionsEnd() async throws {
        try await APITest.run { api in
            try await Self.user(api, "ops@example.com", instanceRole: "operator")
            // A wrong password and an unknown email answer the same.
            let wrong = try await api.send(.post, "/auth/v1/sessions", auth: .basic("ops@example.com", "not the password"))
            let unknown = try await api.send(.post, "/auth/v1/sessions", auth: .basic("nobody@example.com", "not the password"))
            #expect(wrong.status == 401 && unknown.status == 401)
            #expect(wrong.errorMessage == unknown.errorMessage)
            // Guessing one person's password is stopped (10 failures per email and address).
            var statuses: [Int] = []
            for attempt in 0..<10 {
                statuses.append(try await api.send(.post, "/auth/v1/sessions", auth: .basic("ops@example.com", "guess \(attempt)")).status)
            }
            #expect(statuses.last == 429, "\(statuses)")
            // The right password still signs in from here? Not while the pair is locked:
            // it got no answer about its credentials.
            let locked = try await api.send(.post, "/auth/v1/sessions", auth: .basic("ops@example.com", Self.password))
            #expect(locked.status == 429)
            // Sign-ins are in the audit log, from where.
            let audit = try await api.send(.get, "/admin/v1/audit?action=POST%20/auth/v1/sessions", auth: .admin)
            let entries = try audit.json["entries"] as? [[String: Any]] ?? []
            #expect(entries.contains { $0["actor"] as? String == "user:ops@example.com" && $0["status"] as? Int == 401 }, "\(entries)")
            #expect(entries.contains { $0["actor"] as? String == "user:nobody@example.com" }, "\(entries)")
        }
        try await APITest.run { api in
            try await Self.user(api, "ops@example.com", instanceRole: "operator")
            let token = try await Self.signIn(api, "ops@example.com")
            #expect(try await api.send(.get, "/auth/v1/session", auth: .bearer(token)).status == 200)
            #expect(try await api.send(.delete, "/auth/v1/session", auth: .bearer(token)).status == 204)
            #expect(try await api.send(.get, "/auth/v1/session", auth: .bearer(token)).status == 401)
            // Disabled: every session ends, and no sign-in.
            let second = try await Self.signIn(api, "ops@example.com")
            #expect(try await api.send(.patch, "/admin/v1/users/ops@example.com", auth: .admin, json: #"{"disabled": true}"#).status == 200)
            #expect(try await api.send(.get, "/auth/v1/session", auth: .bearer(second)).status == 401)
            #expect(try await api.send(.post, "/auth/v1/sessions", auth: .basic("ops@example.com", Self.password)).status == 401)
            // Enabled with a new password: the old one no longer signs in.
            let enabled = try await api.send(
                .patch,
                "/admin/v1/users/ops@example.com",
                auth: .admin,
                json: #"{"disabled": false, "password": "another long password"}"#
            )
            #expect(enabled.status == 200, "\(enabled.body)")
            #expect(try await api.send(.post, "/auth/v1/sessions", auth: .basic("ops@example.com", Self.password)).status == 401)
            _ = try await Self.signIn(api, "ops@example.com", password: "another long password")
            // Changes of one field, or none, and a role taken away with null (schemathesis found
            // the first two answered 500: a parameter PostgreSQL could not type).
            for change in ["{}", #"{"name": "Ops"}"#, #"{"instance_role": "admin"}"#, #"{"instance_role": null}"#] {
                let changed = try await api.send(.patch, "/admin/v1/users/ops@example.com", auth: .admin, json: change)
                #expect(changed.status == 200, "\(change): \(changed.body)")
            }
            let changed = try await api.send(.get, "/admin/v1/users/ops@example.com", auth: .admin).json
            #expect(changed["name"] as? String == "Ops" && changed["instance_role"] is NSNull, "\(changed)")
            let roleless = try await api.send(.post, "/admin/v1/users", auth: .admin, json: #"{"email": "z@example.com", "instance_role": null}"#)
            #expect(roleless.status == 201, "\(roleless.body)")
            let app = try await api.createApp()
            #expect(try await api.send(.get, "/v3/push/approvals?state=bogus", auth: app.auth).status == 400)
            // Bad input changes nothing.
            let short = try await api.send(.post, "/admin/v1/users", auth: .admin, json: #"{"email": "x@example.com", "password": "short"}"#)
            #expect(short.status == 400 && short.errorCode == 1003, "\(short.body)")
            let role = try await api.send(.post, "/admin/v1/users", auth: .admin, json: #"{"email": "y@example.com", "instance_role": "boss"}"#)
            #expect(role.status == 400, "\(role.body)")
            let twice = try await api.send(.post, "/admin/v1/users", auth: .admin, json: #"{"email": "OPS@example.com"}"#)
            #expect(twice.status == 409, "\(twice.body)")
            let users = try await api.send(.get, "/admin/v1/users", auth: .admin).json["users"] as? [[String: Any]] ?? []
            #expect(users.map { $0["email"] as? String } == ["ops@example.com", "z@example.com"])
        }
    }

    @Test func destructiveActionsAskForThePasswordAgain() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            _ = try await api.registerDevice(app, apnsToken: randomAPNsToken())
            try await Self.user(api, "root@example.com", instanceRole: "admin")
            let root = try await Self.signIn(api, "root@example.com")
            let key = try await APIKeyTests.key(api, app, ["reports:read"])
            let keyID = String(key.prefix(15))
            // Signed in long ago (the sign-in itself confirms).
            try await api.store.sql.query("UPDATE user_sessions SET confirmed_at = now() - interval '1 hour'")
            let refused = [
                try await api.send(.delete, "/v3/keys/\(keyID)", auth: .basic(app.appKey, root)),
                try await api.send(.delete, "/admin/v1/apps/\(app.appKey)", auth: .bearer(root)),
                try await api.send(.post, "/v3/push", auth: .basic(app.appKey, root), json: Self.pushBody(#""all""#)),
                try await api.send(.put, "/v3/keys/master_secret", auth: .basic(app.appKey, root), json: #"{"enabled": false}"#),
            ]
            for reply in refused { #expect(reply.status == 403 && reply.errorCode == 9203, "\(reply.body)") }
            // Nothing changed.
            #expect(try await api.send(.get, "/v3/keys/\(keyID)", auth: app.auth).json["active"] as? Bool == true)
            #expect(try await api.send(.get, "/admin/v1/apps/\(app.appKey)", auth: .admin).status == 200)
            // Not destructive: allowed.
            #expect(try await api.send(.get, "/v3/keys", auth: .basic(app.appKey, root)).status == 200)
            // Keys and the admin token are not asked.
            #expect(try await api.send(.post, "/v3/push", auth: app.auth, json: Self.pushBody(#""all""#)).status == 200)

            let wrong = try await api.send(.post, "/auth/v1/session/confirm", auth: .bearer(root), json: #"{"password": "wrong password"}"#)
            #expect(wrong.status == 401, "\(wrong.body)")
            let confirmed = try await api.send(.post, "/auth/v1/session/confirm", auth: .bearer(root), json: #"{"password": "\#(Self.password)"}"#)
            #expect(confirmed.status == 200, "\(confirmed.body)")
            #expect(try await api.send(.delete, "/v3/keys/\(keyID)", auth: .basic(app.appKey, root)).status == 200)
            #expect(try await api.send(.post, "/v3/push", auth: .basic(app.appKey, root), json: Self.pushBody(#""all""#)).status == 200)
            #expect(try await api.send(.delete, "/admin/v1/apps/\(app.appKey)", auth: .bearer(root)).status == 204)
        }
    }

    @Test func aLargePushWaitsForASecondPerson() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            var devices: [TestDevice] = []
            for _ in 0..<3 { devices.append(try await api.registerDevice(app, apnsToken: randomAPNsToken())) }
            let ids = devices.map { "\"\($0.registrationID)\"" }.joined(separator: ", ")
            try await Self.user(api, "alice@example.com", role: "operator", on: app)
            try await Self.user(api, "bob@example.com", role: "operator", on: app)
            try await Self.user(api, "carol@example.com", role: "author", on: app)
            try await Self.user(api, "vic@example.com", role: "viewer", on: app)
            let alice = try await Self.signIn(api, "alice@example.com")
            let bob = try await Self.signIn(api, "bob@example.com")
            let carol = try await Self.signIn(api, "carol@example.com")
            let vic = try await Self.signIn(api, "vic@example.com")
            let rule = try await api.send(.put, "/v3/push/approval_rule", auth: app.auth, json: #"{"threshold": 2}"#)
            #expect(rule.status == 200, "\(rule.body)")
            let messages = { try await api.store.sql.query("SELECT count(*) FROM messages").collect().first?.decode(Int.self) ?? -1 }

            // Two devices: at the threshold, sent.
            let small = Self.pushBody(#"{"registration_id": [\#(devices.prefix(2).map { "\"\($0.registrationID)\"" }.joined(separator: ", "))]}"#)
            #expect(try await api.send(.post, "/v3/push", auth: .basic(app.appKey, alice), json: small).status == 200)
            #expect(try await messages() == 1)
            // Three: kept, nothing sent.
            let large = Self.pushBody(#"{"registration_id": [\#(ids)]}"#)
            let held = try await api.send(.post, "/v3/push", auth: .basic(app.appKey, alice), json: large)
            #expect(held.status == 202, "\(held.body)")
            #expect(try held.json["state"] as? String == "pending" && held.json["audience_size"] as? Int == 3, "\(held.body)")
            #expect(try held.json["composer"] as? String == "user:alice@example.com")
            let approvalID = try held.string("approval_id")
            #expect(try await messages() == 1)
            // The master secret is a machine: not held.
            #expect(try await api.send(.post, "/v3/push", auth: app.auth, json: large).status == 200)
            #expect(try await messages() == 2)

            // Not by its composer, not by a viewer, not by a key.
            let own = try await api.send(.post, "/v3/push/approvals/\(approvalID)/approve", auth: .basic(app.appKey, alice))
            #expect(own.status == 403 && own.errorMessage?.contains("another person") == true, "\(own.body)")
            #expect(try await api.send(.post, "/v3/push/approvals/\(approvalID)/approve", auth: .basic(app.appKey, vic)).status == 403)
            #expect(try await api.send(.post, "/v3/push/approvals/\(approvalID)/approve", auth: app.auth).status == 403)
            #expect(try await messages() == 2)
            let pending = try await api.send(.get, "/v3/push/approvals", auth: .basic(app.appKey, carol))
            #expect((try pending.json["approvals"] as? [Any])?.count == 1, "\(pending.body)")

            // Bob approves: exactly the composed push is sent, once.
            let approved = try await api.send(.post, "/v3/push/approvals/\(approvalID)/approve", auth: .basic(app.appKey, bob))
            #expect(approved.status == 200, "\(approved.body)")
            #expect(try approved.json["state"] as? String == "approved" && approved.json["decider"] as? String == "user:bob@example.com")
            let msgID = try approved.string("msg_id")
            #expect(try await messages() == 3)
            let again = try await api.send(.post, "/v3/push/approvals/\(approvalID)/approve", auth: .basic(app.appKey, bob))
            #expect(again.status == 409, "\(again.body)")
            #expect(try await messages() == 3)
            let sentAudience = try await api.store.sql.query("SELECT request::text FROM messages WHERE msg_id = \(msgID)").collect().first?
                .decode(String.self)
            #expect(devices.allSatisfy { sentAudience?.contains($0.registrationID) == true }, "\(sentAudience ?? "")")

            // An author composes whatever the size: held, and rejected.
            let drafted = try await api.send(.post, "/v3/push", auth: .basic(app.appKey, carol), json: small)
            #expect(drafted.status == 202, "\(drafted.body)")
            let rejected = try await api.send(.post, "/v3/push/approvals/\(try drafted.string("approval_id"))/reject", auth: .basic(app.appKey, bob))
            let rejectedState = try rejected.json["state"] as? String
            #expect(rejected.status == 200 && rejectedState == "rejected", "\(rejected.body)")
            #expect(
                try await api.send(.post, "/v3/push/approvals/\(try drafted.string("approval_id"))/approve", auth: .basic(app.appKey, alice)).status
                    == 409
            )
            #expect(try await messages() == 3)
            // A key holding compose only drafts too.
            let drafter = try await APIKeyTests.key(api, app, ["compose"])
            #expect(try await api.send(.post, "/v3/push", auth: .basic(app.appKey, drafter), json: small).status == 202)
            #expect(try await messages() == 3)
            let unknown = try await api.send(.post, "/v3/push/approvals/999999/approve", auth: .basic(app.appKey, bob))
            #expect(unknown.status == 404 && unknown.errorCode == 9110, "\(unknown.body)")
        }
    }
}
