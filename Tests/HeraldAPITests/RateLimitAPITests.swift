import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

/// An app's rate limit on the push endpoints, through the admin API and over HTTP: JPush's
/// headers on every answer, 429 with code 2002 past the limit, nothing for other apps.
struct RateLimitAPITests {
    private static let push = #"{"platform": "all", "audience": "all", "notification": {"alert": "Hi"}}"#

    private static func limit(_ reply: Reply) -> (limit: Int?, remaining: Int?, reset: Int?) {
        (
            reply.headers[HTTPField.Name("X-Rate-Limit-Limit")!].flatMap(Int.init),
            reply.headers[HTTPField.Name("X-Rate-Limit-Remaining")!].flatMap(Int.init),
            reply.headers[HTTPField.Name("X-Rate-Limit-Reset")!].flatMap(Int.init)
        )
    }

    /// `rate_limit` of an app answer as "per_minute source".
    private static func setting(_ reply: Reply) -> String {
        guard let setting = (try? reply.json)?["rate_limit"] as? [String: Any] else { return "none in \(reply)" }
        return "\(setting["per_minute"] as? Int ?? -1) \(setting["source"] as? String ?? "?")"
    }

    @Test func anAppOverItsLimitIsRefusedWith2002AndTheHeadersWhileAnotherAppIsNot() async throws {
        try await APITest.run { api in
            let limited = try await api.createApp("Limited")
            let other = try await api.createApp("Other")
            for app in [limited, other] { _ = try await api.registerDevice(app) }

            let set = try await api.send(.patch, "/admin/v1/apps/\(limited.appKey)", auth: .admin, json: #"{"rate_limit_per_minute": 3}"#)
            #expect(set.status == 200, "\(set)")
            #expect(Self.setting(set) == "3 app")

            var remaining: [Int] = []
            for _ in 0..<3 {
                let reply = try await api.send(.post, "/v3/push", auth: limited.auth, json: Self.push)
                #expect(reply.status == 200, "\(reply)")
                let headers = Self.limit(reply)
                #expect(headers.limit == 3)
                remaining.append(try #require(headers.remaining))
                #expect((1...60).contains(try #require(headers.reset)))
            }
            #expect(remaining == [2, 1, 0])

            // The validation counts as a push call too, and is refused before its body is read.
            let refused = try await api.send(.post, "/v3/push/validate", auth: limited.auth, json: "not even JSON")
            #expect(refused.status == 429, "\(refused)")
            #expect(refused.errorCode == HeraldError.Code.tooManyRequests.rawValue)
            #expect(Self.limit(refused).limit == 3 && Self.limit(refused).remaining == 0)
            let retryAfter = try #require(refused.headers[.retryAfter].flatMap(Int.init))
            #expect((1...20).contains(retryAfter), "one token refills in 20 s at 3 a minute")
            #expect(
                try await api.store.api.reports.messages(appID: try #require(try await api.store.api.app(appKey: limited.appKey)).id, msgIDs: [])
                    .isEmpty
            )

            // Another app, with no limit: no headers, never refused.
            for _ in 0..<5 {
                let reply = try await api.send(.post, "/v3/push", auth: other.auth, json: Self.push)
                #expect(reply.status == 200)
                #expect(Self.limit(reply).limit == nil)
            }
            // Other routes of the limited app carry the headers, as JPush's answers do,
            // and are not counted: the bucket is still empty, not emptier.
            let tags = try await api.send(.get, "/v3/tags", auth: limited.auth)
            #expect(tags.status == 200)
            #expect(Self.limit(tags).limit == 3 && Self.limit(tags).remaining == 0, "\(tags.headers)")
            let unknownDevice = try await api.send(.get, "/v3/devices/\(unknownRegistrationID())", auth: limited.auth)
            #expect(unknownDevice.status == 404 && Self.limit(unknownDevice).limit == 3)
            #expect(Self.limit(try await api.send(.get, "/v3/tags", auth: other.auth)).limit == nil)
            // Wrong credentials: the route's 401, no rate headers.
            let wrong = try await api.send(.post, "/v3/push", auth: .basic(limited.appKey, String(repeating: "0", count: 24)), json: Self.push)
            #expect(wrong.status == 401)
            #expect(Self.limit(wrong).limit == nil)

            // Lifting the limit (0) admits again at once; null goes back to the default (none here).
            let lifted = try await api.send(.patch, "/admin/v1/apps/\(limited.appKey)", auth: .admin, json: #"{"rate_limit_per_minute": 0}"#)
            #expect(Self.setting(lifted) == "0 app")
            let reset = try await api.send(.patch, "/admin/v1/apps/\(limited.appKey)", auth: .admin, json: #"{"rate_limit_per_minute": null}"#)
            #expect(Self.setting(reset) == "0 default")
        }
    }

    /// A burst at once on one node: every token of the bucket is spent, by takes sized for
    /// the requests waiting (one token each would have left requests refused while the
    /// bucket still held tokens).
    @Test func aBurstGetsTheWholeBucketAndNoMore() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            _ = try await api.registerDevice(app)
            #expect(try await api.send(.patch, "/admin/v1/apps/\(app.appKey)", auth: .admin, json: #"{"rate_limit_per_minute": 20}"#).status == 200)
            let started = ContinuousClock.now
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<60 { group.addTask { try await api.send(.post, "/v3/push", auth: app.auth, json: Self.push).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let refill = Int(Double(started.duration(to: .now).components.seconds + 1) / 3) + 1
            let accepted = statuses.filter { $0 == 200 }.count
            #expect(accepted >= 20 && accepted <= 20 + refill, "\(accepted) accepted")
            #expect(statuses.filter { $0 == 429 }.count == 60 - accepted)
        }
    }

    @Test func theHeadersGoOnErrorAnswersToo() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            #expect(try await api.send(.patch, "/admin/v1/apps/\(app.appKey)", auth: .admin, json: #"{"rate_limit_per_minute": 100}"#).status == 200)
            let unmatched = try await api.send(.post, "/v3/push", auth: app.auth, json: Self.push)
            #expect(unmatched.errorCode == HeraldError.Code.noAudienceMatch.rawValue, "\(unmatched)")
            #expect(Self.limit(unmatched).limit == 100)
            #expect(Self.limit(unmatched).remaining == 99)
        }
    }

    @Test func aBadSettingIsRefusedAndChangesNothing() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let path = "/admin/v1/apps/\(app.appKey)"
            #expect(try await api.send(.patch, path, auth: .admin, json: #"{"rate_limit_per_minute": 10}"#).status == 200)
            for body in [#"{"rate_limit_per_minute": -1}"#, #"{"rate_limit_per_minute": "10"}"#, #"{"rate_limit": 10}"#] {
                let reply = try await api.send(.patch, path, auth: .admin, json: body)
                #expect(reply.status == 400, "\(body): \(reply)")
            }
            #expect(try await api.send(.patch, path, auth: app.auth, json: #"{"rate_limit_per_minute": 1}"#).status == 401)
            let unknown = try await api.send(.patch, "/admin/v1/apps/0123456789abcdef01234567", auth: .admin, json: "{}")
            #expect(unknown.errorCode == HeraldError.Code.appNotFound.rawValue, "\(unknown)")
            let shown = try await api.send(.get, path, auth: .admin)
            #expect(Self.setting(shown) == "10 app")
        }
    }
}
