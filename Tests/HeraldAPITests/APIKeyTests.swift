import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import HeraldTestSupport
import PostgresNIO
import Prometheus
import Testing

/// API keys (issue #30): scoped, expiring, tied to address ranges, rotated with an
/// overlap, revoked; the master secret switched off; the admin API's keys.
@Suite struct APIKeyTests {
    /// Makes a key of `app` with `scopes` (as its master secret) and returns its secret.
    static func key(_ api: APITest, _ app: TestApp, _ scopes: [String], extra: String = "") async throws -> String {
        let scopeList = scopes.map { "\"\($0)\"" }.joined(separator: ", ")
        let reply = try await api.send(.post, "/v3/keys", auth: app.auth, json: #"{"name": "test key", "scopes": [\#(scopeList)]\#(extra)}"#)
        #expect(reply.status == 201, "\(reply.body)")
        return try reply.string("secret")
    }

    @Test func aKeyScopedToReportsCanReadReportsAndNothingElse() async throws {
        try await APITest.run { api in
            let app = try await api.createApp("Alpha")
            let other = try await api.createApp("Beta")
            let secret = try await Self.key(api, app, ["reports:read"])
            #expect(secret.hasPrefix("hk_"))
            let asBasic = Auth.basic(app.appKey, secret)
            let msgID = "1810000000000000001"
            #expect(try await api.send(.get, "/v3/received?msg_ids=\(msgID)", auth: asBasic).status == 200)
            #expect(try await api.send(.get, "/v3/received?msg_ids=\(msgID)", auth: .bearer(secret)).status == 200)
            // Can't push: 403, the scope named.
            let push = try await api.send(
                .post,
                "/v3/push",
                auth: asBasic,
                json: #"{"platform": "all", "audience": "all", "notification": {"alert": "x"}}"#
            )
            #expect(push.status == 403 && push.errorCode == 2004, "\(push.body)")
            #expect(push.errorMessage?.contains("lacks the scope send") == true, "\(push.body)")
            // Can't read another app: the key is the app's only.
            #expect(try await api.send(.get, "/v3/received?msg_ids=\(msgID)", auth: .basic(other.appKey, secret)).status == 401)
            // Can't change settings, nor make itself keys.
            #expect(try await api.send(.put, "/v3/keys/master_secret", auth: asBasic, json: #"{"enabled": false}"#).status == 403)
            #expect(try await api.send(.post, "/v3/keys", auth: asBasic, json: #"{"name": "x", "scopes": ["send"]}"#).status == 403)
            // Nor reach the admin API.
            #expect(try await api.send(.get, "/admin/v1/apps", auth: .bearer(secret)).status == 401)
            // A key holding `keys` grants only what it holds.
            let manager = try await Self.key(api, app, ["keys", "reports:read"])
            let escalate = try await api.send(
                .post,
                "/v3/keys",
                auth: .basic(app.appKey, manager),
                json: #"{"name": "x", "scopes": ["send"]}"#
            )
            #expect(escalate.status == 403 && escalate.errorMessage?.contains("send") == true, "\(escalate.body)")
            #expect(
                try await api.send(.post, "/v3/keys", auth: .basic(app.appKey, manager), json: #"{"name": "x", "scopes": ["reports:read"]}"#).status
                    == 201
            )
        }
    }

    /// Fail closed: every route that takes app credentials refuses a key holding every
    /// scope but its own, and every admin route refuses an app key, whatever the route.
    @Test func everyRouteRefusesAKeyWithoutItsScope() async throws {
        let url = try DatabaseURL("postgres://unused@127.0.0.1:1/unused")
        let (stores, _) = TestDatabase.makeStores(url, maximumConnections: 1)
        let (_, table) = buildRouter(configuration: APIConfiguration(adminToken: "x"), store: stores.api, registry: PrometheusCollectorRegistry())
        #expect(
            table.routes.filter { $0.access == .open }.map(\.path).sorted() == [
                "/console/assets/{file}", "/console/sign-in", "/healthz", "/metrics", "/openapi.yaml", "/readyz", "/v3/devices",
            ]
        )
        try await APITest.run { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app)
            var secrets: [Scope: String] = [:]
            for scope in Scope.allCases {
                // Without the scope, and without any that holds it (send holds compose).
                let others = Scope.allCases.filter { $0 != scope && !Set([$0]).grants(scope) }
                secrets[scope] = try await Self.key(api, app, others.map(\.rawValue))
            }
            let values = [
                "{app_key}": app.appKey, "{registration_id}": device.registrationID, "{msg_id}": "1810000000000000001",
                "{key_id}": "hk_0123456789ab",
            ]
            for route in table.routes {
                var path = route.path
                for (name, value) in values { path = path.replacingOccurrences(of: name, with: value) }
                path = path.replacingOccurrences(of: #"\{[a-z_]+\}"#, with: "x", options: .regularExpression)
                let json = [.post, .put, .patch].contains(route.method) ? "{}" : nil
                switch route.access {
                case .open, .signIn:
                    continue
                case .console:
                    // A page without the session's cookie sends to sign in, whatever else; what
                    // the console's script fetches (the composer's live preview, a funnel's
                    // events) answers 401.
                    let reply = try await api.send(route.method, path, auth: .bearer(secrets[.send]!))
                    let forScript = route.path.hasSuffix("/compose/preview") || route.path.hasSuffix("/funnel")
                    #expect(reply.status == (forScript ? 401 : 303), "\(route.method) \(route.path): \(reply.status) \(reply.body)")
                case .person:
                    let reply = try await api.send(route.method, path, auth: .bearer(secrets[.send]!), json: json)
                    #expect(reply.status == 401, "\(route.method) \(route.path): \(reply.status) \(reply.body)")
                case .admin:
                    let reply = try await api.send(route.method, path, auth: .bearer(secrets[.send]!), json: json)
                    #expect(reply.status == 401, "\(route.method) \(route.path): \(reply.status) \(reply.body)")
                case .app(let scope), .appOrDevice(let scope):
                    let reply = try await api.send(route.method, path, auth: .basic(app.appKey, secrets[scope]!), json: json)
                    #expect(
                        reply.status == 403 && reply.errorMessage?.contains("lacks the scope \(scope.needed)") == true,
                        "\(route.method) \(route.path): \(reply.status) \(reply.body)"
                    )
                }
            }
        }
    }

    @Test func anExpiredKeyAndAKeyFromOutsideItsRangesAreRefused() async throws {
        try await APITest.live { api, _ in
            let app = try await api.createApp()
            let expiry = ISO8601DateFormatter().string(from: Date().addingTimeInterval(2))
            let short = try await Self.key(api, app, ["reports:read"], extra: #", "expires_at": "\#(expiry)""#)
            let path = "/v3/received?msg_ids=1810000000000000001"
            #expect(try await api.send(.get, path, auth: .basic(app.appKey, short)).status == 200)
            try await Task.sleep(for: .seconds(2.5))
            let expired = try await api.send(.get, path, auth: .basic(app.appKey, short))
            #expect(expired.status == 401 && expired.errorMessage?.contains("expired") == true, "\(expired.body)")

            let elsewhere = try await Self.key(api, app, ["reports:read"], extra: #", "allowed_ranges": ["10.0.0.0/8", "2001:db8::/32"]"#)
            let refused = try await api.send(.get, path, auth: .basic(app.appKey, elsewhere))
            #expect(refused.status == 403 && refused.errorMessage?.contains("may not be used from 127.0.0.1") == true, "\(refused.body)")
            let here = try await Self.key(api, app, ["reports:read"], extra: #", "allowed_ranges": ["127.0.0.0/8"]"#)
            #expect(try await api.send(.get, path, auth: .basic(app.appKey, here)).status == 200)
            // Its use is recorded, from where.
            let keys = try await api.send(.get, "/v3/keys", auth: app.auth).json["keys"] as? [[String: Any]] ?? []
            let used = keys.first { ($0["allowed_ranges"] as? [String]) == ["127.0.0.0/8"] }
            #expect(used?["last_used_from"] as? String == "127.0.0.1", "\(keys)")
            #expect(used?["last_used_at"] is String)
            #expect(keys.first { ($0["expires_at"] as? String) != nil }?["active"] as? Bool == false)
        }
    }

    /// A rotation under load: pushes go on with key A while its successor B is made and A
    /// revoked; none fails before A's revocation, every one after it does.
    @Test func pushesWithTheOldKeyWorkUntilItIsRevokedAndNeverAfter() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app, apnsToken: randomAPNsToken())
            let a = try await Self.key(api, app, ["send", "keys"])
            let push = #"{"platform": "all", "audience": {"registration_id": ["\#(device.registrationID)"]}, "notification": {"alert": "x"}}"#
            let clock = ContinuousClock()
            let sender = Task {
                var results: [(start: ContinuousClock.Instant, end: ContinuousClock.Instant, status: Int)] = []
                while !Task.isCancelled {
                    let start = clock.now
                    let status = try await api.send(.post, "/v3/push", auth: .basic(app.appKey, a), json: push).status
                    results.append((start, clock.now, status))
                }
                return results
            }
            try await Task.sleep(for: .milliseconds(300))
            let keyID = String(a.prefix(15))
            let rotated = try await api.send(.post, "/v3/keys/\(keyID)/rotate", auth: .basic(app.appKey, a))
            #expect(rotated.status == 201, "\(rotated.body)")
            let b = try rotated.string("secret")
            #expect(try rotated.string("rotated_from") == keyID)
            #expect(try await api.send(.post, "/v3/push", auth: .basic(app.appKey, b), json: push).status == 200)
            try await Task.sleep(for: .milliseconds(300))
            let revokeStart = clock.now
            #expect(try await api.send(.delete, "/v3/keys/\(keyID)", auth: .basic(app.appKey, b)).status == 200)
            let revokeEnd = clock.now
            try await Task.sleep(for: .milliseconds(300))
            // The request in flight when the sender stops is cancelled with it: left out.
            let stop = clock.now
            sender.cancel()
            let results = ((try? await sender.value) ?? []).filter { $0.end < stop }
            let before = results.filter { $0.end < revokeStart }
            let after = results.filter { $0.start > revokeEnd }
            #expect(before.count > 3 && after.count > 3, "\(before.count) before, \(after.count) after")
            #expect(before.allSatisfy { $0.status == 200 }, "\(before.map(\.status))")
            #expect(after.allSatisfy { $0.status == 401 }, "\(after.map(\.status))")
            #expect(try await api.send(.post, "/v3/push", auth: .bearer(b), json: push).status == 200)
        }
    }

    @Test func anAppSwitchesItsMasterSecretOffAndTheAdministratorOnAgain() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let all = try await Self.key(api, app, Scope.allCases.map(\.rawValue))
            let path = "/v3/received?msg_ids=1810000000000000001"
            #expect(try await api.send(.put, "/v3/keys/master_secret", auth: app.auth, json: #"{"enabled": false}"#).status == 200)
            let refused = try await api.send(.get, path, auth: app.auth)
            #expect(refused.status == 401, "\(refused.body)")
            #expect(try await api.send(.get, path, auth: .basic(app.appKey, all)).status == 200)
            let state = try await api.send(.get, "/v3/keys/master_secret", auth: .basic(app.appKey, all))
            #expect(state.body.contains(#""enabled":false"#), "\(state.body)")
            let back = try await api.send(.put, "/admin/v1/apps/\(app.appKey)/keys/master_secret", auth: .admin, json: #"{"enabled": true}"#)
            #expect(back.status == 200)
            #expect(try await api.send(.get, path, auth: app.auth).status == 200)
        }
    }

    @Test func adminKeysOpenTheAdminAPIUntilRevoked() async throws {
        try await APITest.run { api in
            let created = try await api.send(.post, "/admin/v1/keys", auth: .admin, json: #"{"name": "deploy bot"}"#)
            #expect(created.status == 201, "\(created.body)")
            let secret = try created.string("secret")
            #expect(secret.hasPrefix("hka_"))
            #expect(try await api.send(.get, "/admin/v1/apps", auth: .bearer(secret)).status == 200)
            // An admin key opens no app's routes.
            let app = try await api.createApp()
            #expect(try await api.send(.get, "/v3/received?msg_ids=1810000000000000001", auth: .basic(app.appKey, secret)).status == 401)
            let keyID = try created.string("key_id")
            let rotated = try await api.send(.post, "/admin/v1/keys/\(keyID)/rotate", auth: .bearer(secret))
            #expect(rotated.status == 201)
            #expect(try await api.send(.delete, "/admin/v1/keys/\(keyID)", auth: .bearer(try rotated.string("secret"))).status == 200)
            let revoked = try await api.send(.get, "/admin/v1/apps", auth: .bearer(secret))
            #expect(revoked.status == 401 && revoked.errorMessage?.contains("revoked") == true, "\(revoked.body)")
            let list = try await api.send(.get, "/admin/v1/keys", auth: .admin).json["keys"] as? [[String: Any]] ?? []
            #expect(list.count == 2 && list.first?["active"] as? Bool == false)
        }
    }

    @Test func badKeyRequestsAreRefusedWithTheFieldNamed() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let cases: [(String, String)] = [
                (#"{"name": "x"}"#, "scopes"),
                (#"{"name": "x", "scopes": []}"#, "scopes"),
                (#"{"name": "x", "scopes": ["teleport"]}"#, "scopes[0]"),
                (#"{"name": "  ", "scopes": ["send"]}"#, "name"),
                (#"{"name": "x", "scopes": ["send"], "allowed_ranges": ["nowhere"]}"#, "allowed_ranges[0]"),
                (#"{"name": "x", "scopes": ["send"], "expires_at": "2020-01-01T00:00:00Z"}"#, "expires_at"),
                (#"{"name": "x", "scopes": ["send"], "colour": "red"}"#, "colour"),
            ]
            for (json, field) in cases {
                let reply = try await api.send(.post, "/v3/keys", auth: app.auth, json: json)
                #expect(reply.status == 400 && reply.errorMessage?.contains(field) == true, "\(json): \(reply.body)")
            }
            #expect((try await api.send(.get, "/v3/keys", auth: app.auth).json["keys"] as? [Any])?.isEmpty == true)
            #expect(try await api.send(.delete, "/v3/keys/hk_0123456789ab", auth: app.auth).errorCode == 9108)
        }
    }
}
