import Foundation
import HeraldCenter
import HeraldCore
import HeraldKit
import HeraldNode
import HeraldNodeTesting
import HeraldSMS
import HeraldTestSupport
import Testing

/// SMS providers that hang: each SMS is sent on its own and its outcome recorded as it
/// comes, and one app has at most a quarter of the sender in flight, so one app's hung
/// provider, whatever its backlog, holds neither other apps' SMS nor the record of SMS
/// already sent (which a crash would otherwise send again).
@Suite struct SMSProviderFaultTests {
    @Test func aHungProviderHoldsOnlyItsOwnSMSAndEachOutcomeIsRecordedAsItComes() async throws {
        let sandbox = SMSSandbox()
        let configure: @Sendable (inout HeraldNodeConfiguration) -> Void = { configuration in
            configuration.sms.provider = sandbox
            configuration.allowLoopbackReceivers()
        }
        try await TestReceiver.run { receiver in
            receiver.hang("/sms")
            try await TestNode.run(configure: configure) { test in
                // The test's app has a provider of its own, which never answers within its deadline.
                let set = try await test.call(
                    "PUT",
                    "/admin/v1/apps/\(test.appKey)/sms",
                    [
                        "url": .string(receiver.url("/sms")), "body_template": #"{"to": {{mobile}}}"#, "secret": "0123456789abcdef-secret",
                        "timeout_seconds": 60,
                    ],
                    as: .admin
                )
                #expect(set.status == 200, "\(set.json)")
                // More SMS than the sender has slots (64), all hung.
                let backlog = 70
                for index in 0..<backlog {
                    let hung = try await test.register(platform: "android")
                    let mobile = "+86138000\(String(format: "%05d", index))"
                    #expect(try await test.call("POST", "/v3/devices/\(hung.registrationID)", ["mobile": .string(mobile)]).status == 200)
                }
                let first = try await test.push([
                    "audience": "all", "notification": ["alert": "x"],
                    "sms_message": ["content": "held", "delay_time": 0],
                ])
                #expect(first.status == 200)
                #expect(try await receiver.wait { $0.contains { $0.path == "/sms" } })
                try await waitUntilAsync("the hung app's share of the sender claimed") {
                    try await test.count("sms_outbox WHERE app_id = \(test.appID) AND state = 'sending'") == 16
                }

                // Another app's SMS, through the node's provider, goes out meanwhile and is recorded sent.
                let other = try await test.stores.api.createApp(name: "Other")
                let caller = Caller.basic(other.app.appKey, other.masterSecret)
                let device = try await HeraldAPIClient(baseURL: test.apiURL, appKey: other.app.appKey).register(
                    platform: "android",
                    apnsToken: nil,
                    apnsEnvironment: nil,
                    timeZone: nil,
                    language: nil
                )
                #expect(try await test.call("POST", "/v3/devices/\(device.registrationID)", ["mobile": "+8613800099999"], as: caller).status == 200)
                let second = try await test.call(
                    "POST",
                    "/v3/push",
                    [
                        "audience": ["registration_id": [.string(device.registrationID)]], "notification": ["alert": "y"],
                        "sms_message": ["content": "free", "delay_time": 0],
                    ],
                    as: caller
                )
                #expect(second.status == 200, "\(second.json)")
                try await waitUntilAsync("the other app's SMS is sent and recorded") {
                    try await test.count("sms_outbox WHERE app_id = \(other.app.id) AND state = 'sent'") == 1
                }
                #expect(sandbox.received.map(\.request.mobile) == ["+8613800099999"])
                // The hung app's share of the sender is still out, and no more of its SMS.
                #expect(try await test.count("sms_outbox WHERE app_id = \(test.appID) AND state = 'sending'") == 16)
                // (The HTTP client opens 8 connections to one host: the others wait for one.)
                #expect((1...16).contains(receiver.requests.filter { $0.path == "/sms" }.count))
            }
        }
    }

    @Test func aProvidersRedirectIsRetriedNotFollowed() async throws {
        let configure: @Sendable (inout HeraldNodeConfiguration) -> Void = { configuration in
            configuration.sms.provider = SMSSandbox()
            configuration.sms.retryDelay = .milliseconds(200)
            configuration.allowLoopbackReceivers()
        }
        let redirectingOnce: @Sendable (Int) -> Int = { $0 == 0 ? 307 : 200 }
        try await TestReceiver.run(respond: redirectingOnce) { receiver in
            try await TestNode.run(configure: configure) { test in
                let set = try await test.call(
                    "PUT",
                    "/admin/v1/apps/\(test.appKey)/sms",
                    ["url": .string(receiver.url("/sms")), "body_template": #"{"to": {{mobile}}}"#, "secret": "0123456789abcdef-secret"],
                    as: .admin
                )
                #expect(set.status == 200, "\(set.json)")
                let device = try await test.register(platform: "android")
                #expect(try await test.call("POST", "/v3/devices/\(device.registrationID)", ["mobile": "+8613800000003"]).status == 200)
                let sent = try await test.push([
                    "audience": ["registration_id": [.string(device.registrationID)]], "notification": ["alert": "x"],
                    "sms_message": ["content": "code", "delay_time": 0],
                ])
                #expect(sent.status == 200)
                try await waitUntilAsync("the SMS is sent on its second attempt") {
                    try await test.count("sms_outbox WHERE state = 'sent'") == 1
                }
                // The 307 was a failed attempt at the provider's own URL, never a request elsewhere.
                #expect(receiver.requests.map(\.path) == ["/sms", "/sms"])
            }
        }
    }
}
