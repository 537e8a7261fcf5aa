import Foundation
import HeraldCenter
import HeraldCore
import HeraldNode
import HeraldNodeTesting
import HeraldTestSupport
import Testing

/// Herald's requests to the addresses operators name (webhooks, callbacks, SMS providers,
/// a webhook's test request): a redirect is a failure, never followed; an internal address
/// is refused, written in the URL (at the API) or resolved from a name (when sending),
/// unless the administrator allows its range.
@Suite struct OutboundRequestTests {
    static let quick: @Sendable (inout HeraldNodeConfiguration) -> Void = { WebhookTests.quickRetries(&$0) }

    @Test func aWebhookRedirectIsAFailureRetriedAndShownNeverFollowed() async throws {
        // A 307 (the signed batch would be posted again elsewhere), then a 302, then 200.
        let redirecting: @Sendable (Int) -> Int = { $0 == 0 ? 307 : $0 == 1 ? 302 : 200 }
        try await TestReceiver.run(respond: redirecting) { receiver in
            try await TestNode.run(configure: Self.quick) { test in
                let created = try await test.call(
                    "POST",
                    "/admin/v1/apps/\(test.appKey)/webhooks",
                    ["url": .string(receiver.url()), "types": ["accepted"]],
                    as: .admin
                )
                let id = try #require(created.json["webhook"]["id"].int)
                _ = try await test.register(platform: "android", alias: "a")
                let sent = try await test.push(["audience": ["alias": ["a"]], "message": ["msg_content": "m"]])
                #expect(try await receiver.wait { !$0.filter { $0.path == "/hook" && $0.status == 200 }.isEmpty })
                // Each redirect was a failed attempt of the same batch, retried at the endpoint.
                #expect(receiver.requests.map(\.path) == ["/hook", "/hook", "/hook"])
                #expect(receiver.accepted.flatMap { $0.json["events"].array ?? [] }.map { $0["msg_id"].string ?? "" } == [sent.msgID])
                let shown = try await test.call("GET", "/admin/v1/apps/\(test.appKey)/webhooks/\(id)", as: .admin)
                #expect(shown.json["delivered"].int == 1)
                #expect(shown.json["last_failure"]["status"].int == 302)
                #expect(shown.json["last_failure"]["error"].string?.contains("redirect") == true)

                // The test request reports a redirect as not delivered, and doesn't follow it.
                receiver.answer { _ in 302 }
                let tested = try await test.call("POST", "/admin/v1/apps/\(test.appKey)/webhooks/\(id)/test", as: .admin)
                #expect(tested.json["delivered"].bool == false)
                #expect(tested.json["status"].int == 302)
                #expect(!receiver.requests.contains { $0.path == "/redirected" })
            }
        }
    }

    @Test func aCallbackRedirectIsRetriedNotFollowed() async throws {
        let redirecting: @Sendable (Int) -> Int = { _ in 307 }
        try await TestReceiver.run(respond: redirecting) { receiver in
            try await TestNode.run(configure: Self.quick) { test in
                // Sent to APNs (the sandbox): a `sent` event, which the callback asks for.
                _ = try await test.register(platform: "ios", token: TestNode.token(1), alias: "cb")
                let sent = try await test.push([
                    "audience": ["alias": ["cb"]], "notification": ["alert": "m"],
                    "callback": ["url": .string(receiver.url("/jpush")), "type": 8],
                ])
                #expect(sent.status == 200)
                #expect(try await receiver.wait { $0.count >= 2 })
                try await waitUntilAsync("the callback's failure is recorded") {
                    try await test.count("callback_outbox WHERE last_status = 307 AND attempts >= 2") > 0
                }
                #expect(!receiver.requests.contains { $0.path == "/redirected" })
                #expect(receiver.requests.allSatisfy { $0.path == "/jpush" })
            }
        }
    }

    @Test func internalAddressesWrittenInAURLAreRefusedAtTheAPI() async throws {
        try await TestNode.run { test in
            let device = try await test.register(platform: "android", alias: "a")
            let internalURLs = [
                "http://169.254.169.254/latest/meta-data", "http://10.0.0.8/hook", "http://[fe80::1]/hook", "http://0.0.0.0:8080/",
                "http://2130706433/", "http://0x7f000001/", "http://0177.0.0.1/", "http://127.1/", "http://[::ffff:127.0.0.1]/",
                "https://192.168.1.10:8443/x",
            ]
            for url in internalURLs {
                let push = try await test.push([
                    "audience": ["alias": ["a"]], "message": ["msg_content": "m"], "callback": ["url": .string(url)],
                ])
                #expect(push.error == HeraldError.Code.invalidField.rawValue, "\(url): \(push.json)")
                #expect(push.json["error"]["message"].string?.hasPrefix("callback.url") == true, "\(push.json)")
                let webhook = try await test.call("POST", "/admin/v1/apps/\(test.appKey)/webhooks", ["url": .string(url)], as: .admin)
                #expect(webhook.error == HeraldError.Code.invalidField.rawValue, "\(url): \(webhook.json)")
                let sms = try await test.call(
                    "PUT",
                    "/admin/v1/apps/\(test.appKey)/sms",
                    ["url": .string(url), "body_template": #"{"to": {{mobile}}}"#, "secret": "0123456789abcdef-secret"],
                    as: .admin
                )
                #expect(sms.error == HeraldError.Code.invalidField.rawValue, "\(url): \(sms.json)")
                // A batch push's entry, and a schedule's push, likewise.
                let batch = try await test.call(
                    "POST",
                    "/v3/push/batch/regid/single",
                    [
                        "pushlist": [
                            "c1": ["target": .string(device.registrationID), "notification": ["alert": "m"], "callback": ["url": .string(url)]]
                        ]
                    ]
                )
                #expect(batch.json["c1"]["error"]["code"].int == HeraldError.Code.invalidField.rawValue, "\(url): \(batch.json)")
                let schedule = try await test.call(
                    "POST",
                    "/v3/schedules",
                    [
                        "name": "s", "enabled": true, "trigger": ["single": ["time": "2099-01-01 00:00:00"]],
                        "push": [
                            "platform": "all", "audience": ["alias": ["a"]], "message": ["msg_content": "m"], "callback": ["url": .string(url)],
                        ],
                    ]
                )
                #expect(schedule.error == HeraldError.Code.invalidField.rawValue, "\(url): \(schedule.json)")
                #expect(schedule.json["error"]["message"].string?.hasPrefix("push.callback.url") == true, "\(schedule.json)")
            }
            #expect(try await test.count("webhooks") == 0)
            // A public address and a name pass (a name is checked when it is resolved).
            let accepted = try await test.call("POST", "/admin/v1/apps/\(test.appKey)/webhooks", ["url": "https://203.0.113.7/hook"], as: .admin)
            #expect(accepted.status == 201)
        }
    }

    @Test func aNameThatResolvesToAnInternalAddressGetsNoRequest() async throws {
        try await TestReceiver.run { receiver in
            let quick: @Sendable (inout HeraldNodeConfiguration) -> Void = { $0.webhooks.pollInterval = .milliseconds(50) }
            // No loopback allowance: `localhost` is a name the API takes, refused once resolved.
            try await TestNode.run(configure: quick) { test in
                let url = "http://localhost:\(receiver.port)/hook"
                let created = try await test.call(
                    "POST",
                    "/admin/v1/apps/\(test.appKey)/webhooks",
                    ["url": .string(url), "types": ["accepted"]],
                    as: .admin
                )
                let id = try #require(created.json["webhook"]["id"].int)
                let tested = try await test.call("POST", "/admin/v1/apps/\(test.appKey)/webhooks/\(id)/test", as: .admin)
                #expect(tested.json["delivered"].bool == false)
                #expect(tested.json["error"].string?.contains("loopback") == true, "\(tested.json)")

                _ = try await test.register(platform: "ios", token: TestNode.token(1), alias: "a")
                _ = try await test.push([
                    "audience": ["alias": ["a"]], "notification": ["alert": "m"],
                    "callback": ["url": .string("http://localhost:\(receiver.port)/jpush"), "type": 8],
                ])
                try await waitUntilAsync("the webhook's refusal is shown") {
                    let shown = try await test.call("GET", "/admin/v1/apps/\(test.appKey)/webhooks/\(id)", as: .admin)
                    return shown.json["last_failure"]["error"].string?.contains("address refused (loopback)") == true
                }
                try await waitUntilAsync("the callback's refusal is recorded") {
                    try await test.count("callback_outbox WHERE last_error LIKE 'address refused (loopback)%'") > 0
                }
                #expect(receiver.requests.isEmpty)
            }
        }
    }
}
