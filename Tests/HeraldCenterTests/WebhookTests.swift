import Foundation
import HeraldCenter
import HeraldCore
import HeraldNode
import HeraldNodeTesting
import HeraldTestSupport
import Testing

/// App webhooks: each event once, in order, signed, after retries; a batch that keeps
/// failing is given up (visible in the admin API) and later events still flow.
@Suite struct WebhookTests {
    /// Short retries and polls, so real time stays short.
    static let quickRetries: @Sendable (inout HeraldNodeConfiguration) -> Void = {
        $0.webhooks.retryDelay = .milliseconds(100)
        $0.webhooks.maxRetryDelay = .milliseconds(200)
        $0.webhooks.pollInterval = .milliseconds(50)
        $0.allowLoopbackReceivers()
    }

    @Test func aReceiverThatFailsTwiceGetsEachEventOnceInOrderSigned() async throws {
        let failingTwice: @Sendable (Int) -> Int = { $0 < 2 ? 500 : 200 }
        try await TestReceiver.run(respond: failingTwice) { receiver in
            try await TestNode.run(configure: Self.quickRetries) { test in
                let created = try await test.call(
                    "POST",
                    "/admin/v1/apps/\(test.appKey)/webhooks",
                    ["url": .string(receiver.url()), "types": ["accepted"]],
                    as: .admin
                )
                #expect(created.status == 201)
                let secret = try #require(created.json["secret"].string)
                let webhookID = try #require(created.json["webhook"]["id"].int)
                _ = try await test.register(platform: "android", alias: "a")
                var msgIDs: [String] = []
                for index in 0..<3 {
                    let sent = try await test.push(["audience": ["alias": ["a"]], "message": ["msg_content": .string("m\(index)")]])
                    #expect(sent.status == 200)
                    msgIDs.append(sent.msgID)
                }
                let delivered = try await receiver.wait { received in
                    received.filter { (200..<300).contains($0.status) }.flatMap { $0.json["events"].array ?? [] }.count >= 3
                }
                #expect(delivered)
                // Two failures, then the retried batch: each event once, in the order of the pushes.
                #expect(receiver.requests.prefix(2).allSatisfy { $0.status == 500 })
                let events = receiver.accepted.flatMap { $0.json["events"].array ?? [] }
                #expect(events.map { $0["msg_id"].string ?? "" } == msgIDs)
                #expect(events.allSatisfy { $0["type"].string == "accepted" })
                #expect(Set(events.compactMap { $0["id"].int }).count == events.count)
                // Every request, failed or not, is signed: HMAC-SHA256 of "<timestamp>.<body>".
                for request in receiver.requests {
                    let timestamp = try #require(request.headers["x-herald-timestamp"].flatMap { Int64($0) })
                    let signature = try #require(request.headers["x-herald-signature"])
                    #expect(WebhookSignature.isValid(signature, secret: secret, timestamp: timestamp, body: request.body))
                    #expect(!WebhookSignature.isValid(signature, secret: secret + "x", timestamp: timestamp, body: request.body))
                }
                // The admin API shows the endpoint healthy, and nothing more arrives.
                try await Task.sleep(for: .milliseconds(300))
                let shown = try await test.call("GET", "/admin/v1/apps/\(test.appKey)/webhooks/\(webhookID)", as: .admin)
                #expect(shown.json["delivered"].int == 3)
                #expect(shown.json["consecutive_failures"].int == 0)
                #expect(shown.json["lag"].int == 0)
                #expect(shown.json["last_success_at"].string != nil)
                #expect(shown.json["last_failure"]["status"].int == 500)
                #expect(receiver.accepted.flatMap { $0.json["events"].array ?? [] }.count == 3)
            }
        }
    }

    @Test func aReceiverThatAlwaysFailsIsGivenUpVisiblyAndLaterEventsFlow() async throws {
        let failing: @Sendable (Int) -> Int = { _ in 503 }
        try await TestReceiver.run(respond: failing) { receiver in
            let configure: @Sendable (inout HeraldNodeConfiguration) -> Void = {
                Self.quickRetries(&$0)
                $0.webhooks.retryFor = .seconds(1)
            }
            try await TestNode.run(configure: configure) { test in
                let created = try await test.call(
                    "POST",
                    "/admin/v1/apps/\(test.appKey)/webhooks",
                    ["url": .string(receiver.url()), "types": ["accepted"]],
                    as: .admin
                )
                let webhookID = try #require(created.json["webhook"]["id"].int)
                _ = try await test.register(platform: "android", alias: "a")
                let lost = try await test.push(["audience": ["alias": ["a"]], "message": ["msg_content": "lost"]])
                // While it fails, the admin API says so.
                #expect(try await receiver.wait { $0.count >= 2 })
                let failing = try await test.call("GET", "/admin/v1/apps/\(test.appKey)/webhooks/\(webhookID)", as: .admin)
                #expect((failing.json["consecutive_failures"].int ?? 0) >= 1)
                #expect(failing.json["last_failure"]["status"].int == 503)
                #expect(failing.json["lag"].int == 1)
                // After the bound, the batch is given up and recorded.
                var failures: HTTPAnswer?
                let deadline = ContinuousClock.now + .seconds(10)
                while ContinuousClock.now < deadline {
                    let answer = try await test.call("GET", "/admin/v1/apps/\(test.appKey)/webhooks/\(webhookID)/failures", as: .admin)
                    if answer.json["failures"].array?.isEmpty == false {
                        failures = answer
                        break
                    }
                    try await Task.sleep(for: .milliseconds(50))
                }
                let failure = try #require(failures?.json["failures"][0])
                #expect(failure["events"].int == 1)
                #expect(failure["status"].int == 503)
                #expect((failure["attempts"].int ?? 0) >= 2)
                // The receiver recovers: the next event arrives, the given-up one doesn't again.
                receiver.answer { _ in 200 }
                let next = try await test.push(["audience": ["alias": ["a"]], "message": ["msg_content": "next"]])
                #expect(try await receiver.wait { !$0.filter { (200..<300).contains($0.status) }.isEmpty })
                let events = receiver.accepted.flatMap { $0.json["events"].array ?? [] }
                #expect(events.map { $0["msg_id"].string ?? "" } == [next.msgID])
                #expect(!events.contains { $0["msg_id"].string == lost.msgID })
                let healthy = try await test.call("GET", "/admin/v1/apps/\(test.appKey)/webhooks/\(webhookID)", as: .admin)
                #expect(healthy.json["consecutive_failures"].int == 0)
            }
        }
    }

    @Test func webhooksAreManagedByTheAdminAndTestedWithASignedRequest() async throws {
        try await TestReceiver.run { receiver in
            let configure: @Sendable (inout HeraldNodeConfiguration) -> Void = { $0.allowLoopbackReceivers() }
            try await TestNode.run(configure: configure) { test in
                let path = "/admin/v1/apps/\(test.appKey)/webhooks"
                #expect(try await test.call("POST", path, ["url": "ftp://example.com"], as: .admin).error == HeraldError.Code.invalidField.rawValue)
                // Control characters (a NUL PostgreSQL would refuse) and line breaks are refused
                // up front, and nothing is added.
                for url in ["https://example.com/a\u{0}b", "https://exa\u{1B}mple.com", "https://example.com/\u{2028}"] {
                    #expect(try await test.call("POST", path, ["url": .string(url)], as: .admin).error == HeraldError.Code.invalidField.rawValue)
                }
                #expect(try await test.call("GET", path, as: .admin).json["webhooks"].array?.count == 0)
                #expect(
                    try await test.call("POST", path, ["url": .string(receiver.url()), "types": ["nope"]], as: .admin).error
                        == HeraldError.Code.invalidField.rawValue
                )
                let created = try await test.call("POST", path, ["url": .string(receiver.url())], as: .admin)
                let id = try #require(created.json["webhook"]["id"].int)
                let secret = try #require(created.json["secret"].string)
                // The secret is shown once: never in a listing.
                let listed = try await test.call("GET", path, as: .admin)
                #expect(listed.json["webhooks"].array?.count == 1)
                #expect(listed.json["webhooks"][0]["secret"].isNull)
                // An app with a webhook records events (the setting shows it).
                let settings = try await test.call("GET", "/admin/v1/apps/\(test.appKey)/events", as: .admin)
                #expect(settings.json["recording"].bool == true)
                #expect(settings.json["enabled"].bool == false)
                let tested = try await test.call("POST", "\(path)/\(id)/test", as: .admin)
                #expect(tested.json["delivered"].bool == true)
                #expect(tested.json["status"].int == 200)
                let request = try #require(receiver.requests.last)
                #expect(request.json["events"][0]["type"].string == "test")
                let timestamp = try #require(request.headers["x-herald-timestamp"].flatMap { Int64($0) })
                #expect(
                    WebhookSignature.isValid(request.headers["x-herald-signature"] ?? "", secret: secret, timestamp: timestamp, body: request.body)
                )
                #expect(try await test.call("DELETE", "\(path)/\(id)", as: .admin).status == 204)
                #expect(try await test.call("GET", "\(path)/\(id)", as: .admin).error == HeraldError.Code.webhookNotFound.rawValue)
                #expect(try await test.call("DELETE", "\(path)/\(id)", as: .admin).error == HeraldError.Code.webhookNotFound.rawValue)
            }
        }
    }
}
