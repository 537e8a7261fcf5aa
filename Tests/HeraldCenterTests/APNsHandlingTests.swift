import Foundation
import HeraldAPNsSandbox
import HeraldCore
import HeraldKit
import HeraldNodeTesting
import HeraldTestSupport
import Testing

/// What the center does with APNs' answers: retries, invalid tokens, broken credentials.
@Suite struct APNsHandlingTests {
    @Test func transientFailuresAreRetriedWithBackoffUntilDelivered() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(40)
            let device = try await test.register(token: token, alias: "flaky")
            test.sandbox.injectFaults([.serviceUnavailable, .serviceUnavailable, .serviceUnavailable])
            let sent = try await test.push(["audience": ["alias": ["flaky"]], "notification": ["alert": "eventually"]])
            let report = try await test.settledReport(sent.msgID) { $0["apns_sent"].int == 1 }
            #expect(report["apns_sent"].int == 1)
            #expect(test.apnsReceived(token).count == 1)
            #expect(try await test.status(sent.msgID, device.registrationID, becomes: "sent_apns") == "sent_apns")
        }
    }

    /// The first pushes of an app reach APNs concurrently, before it has a client: they
    /// must share one (a second client replaced the first and failed what it had in
    /// flight, which the center then sent again).
    @Test func anAppsFirstConcurrentPushesGoToAPNsOnceEach() async throws {
        try await TestNode.run { test in
            let tokens = (0..<20).map { TestNode.token(60 + $0) }
            for token in tokens { _ = try await test.register(token: token, tags: ["crowd"]) }
            let sent = try await test.push(["audience": ["tag": ["crowd"]], "notification": ["alert": "all at once"]])
            let report = try await test.settledReport(sent.msgID)
            #expect(report["apns_sent"].int == 20)
            #expect(test.sandbox.notifications.map(\.deviceToken).sorted() == tokens.sorted())
            // Each went on its first attempt (a replaced client failed what it held).
            let rows = try await test.stores.sql.query("SELECT max(apns_attempts) FROM deliveries", logger: TestDatabase.logger)
            for try await attempts in rows.decode(Int32.self) { #expect(attempts == 1) }
        }
    }

    /// A retried notification carries a badge only when the push sets one: a retry must
    /// not reset the app's badge.
    @Test func aRetryCarriesNoBadgeThePushDidNotSet() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(50)
            _ = try await test.register(token: token, alias: "badged")
            let first = try await test.push(["audience": ["alias": ["badged"]], "notification": ["ios": ["alert": "3 new", "badge": "+3"]]])
            _ = try await test.settledReport(first.msgID)
            // More than the client's own attempts: the center retries it later.
            test.sandbox.injectFaults([.serviceUnavailable, .serviceUnavailable, .serviceUnavailable])
            let second = try await test.push(["audience": ["alias": ["badged"]], "notification": ["alert": "no badge"]])
            _ = try await test.settledReport(second.msgID) { $0["apns_sent"].int == 1 }
            let received = test.apnsReceived(token)
            #expect(received.count == 2)
            #expect(received.first?.json["aps"]["badge"].int == 3)
            #expect(received.last?.json["aps"]["alert"].string == "no badge")
            #expect(received.last?.json["aps"]["badge"].isNull == true)
        }
    }

    /// The app reports the badge it shows (JPush's setBadge, through HeraldKit): a push's
    /// "+1" counts from it, and resetBadge starts it again from 0.
    @Test func aPushesBadgeChangeCountsFromTheBadgeTheAppReported() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(51)
            let device = try await test.register(token: token, alias: "set-badge")
            let api = HeraldAPIClient(baseURL: test.apiURL, appKey: test.appKey)
            try await api.setBadge(5, credentials: device)
            #expect(try await test.call("GET", "/v3/devices/\(device.registrationID)").json["badge"].int == 5)
            _ = try await test.push(["audience": ["alias": ["set-badge"]], "notification": ["ios": ["alert": "one more", "badge": "+1"]]])
            #expect(try await test.waitForAPNs(token).first?.json["aps"]["badge"].int == 6)
            try await api.setBadge(0, credentials: device)
            _ = try await test.push(["audience": ["alias": ["set-badge"]], "notification": ["ios": ["alert": "again", "badge": "+1"]]])
            #expect(try await test.waitForAPNs(token, count: 2).last?.json["aps"]["badge"].int == 1)
            let refused = try await test.call("POST", "/v3/devices/\(device.registrationID)", ["badge": -1])
            #expect(refused.status == 400 && refused.json["error"]["message"].string?.contains("badge") == true, "\(refused.json)")
        }
    }

    @Test func anUnregisteredTokenIsInvalidatedAndTheFailureReported() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(41)
            let device = try await test.register(token: token, alias: "gone")
            test.sandbox.markUnregistered(token, since: Date().addingTimeInterval(5))
            let sent = try await test.push(["audience": ["alias": ["gone"]], "notification": ["alert": "hello?"]])
            let report = try await test.settledReport(sent.msgID)
            #expect(report["apns_failed"].int == 1)
            let failures = report["apns_failures"].array
            #expect(failures?.first?["reason"].string == "Unregistered")
            let stored = try await test.stores.api.devices.find(appID: test.appID, registrationID: device.registrationID)
            #expect(stored?.tokenValid == false)
            // Nothing more goes to a token known to be invalid.
            let next = try await test.push(["audience": ["alias": ["gone"]], "notification": ["alert": "still?"]])
            let nextReport = try await test.settledReport(next.msgID)
            #expect(nextReport["waiting"].int == 1)
            #expect(nextReport["apns_failed"].int == 0)
        }
    }

    @Test func brokenCredentialsAreVisibleAndDoNotStallOtherApps() async throws {
        try await TestNode.run { test in
            let upload: JSON = [
                "type": "token", "key_id": "KEY1234567", "team_id": "TEAM123456", "bundle_id": "com.example.app",
                "environment": "sandbox", "private_key": JSON(TestCredentials.p8()),
            ]
            let answer = try await test.call("PUT", "/admin/v1/apps/\(test.appKey)/apns", upload, as: .admin)
            #expect(answer.status == 200)

            let token = TestNode.token(42)
            _ = try await test.register(token: token, alias: "victim")
            test.sandbox.setFault(.reject(status: 403, reason: "InvalidProviderToken"), forDevice: token)
            let sent = try await test.push(["audience": ["alias": ["victim"]], "notification": ["alert": "x"]])
            let report = try await test.settledReport(sent.msgID)
            #expect(report["apns_failures"][0]["reason"].string == "InvalidProviderToken")

            let apns = try await test.call("GET", "/admin/v1/apps/\(test.appKey)", as: .admin).json["apns"]
            #expect(apns["status"].string == "broken")
            #expect(apns["problem"].string == "InvalidProviderToken")

            // Another app's pushes go through.
            let other = try await test.stores.api.createApp(name: "Healthy")
            let otherToken = TestNode.token(43)
            _ = try await HeraldAPIClient(baseURL: test.apiURL, appKey: other.app.appKey)
                .register(platform: "ios", apnsToken: otherToken, apnsEnvironment: "sandbox")
            let fine = try await test.call(
                "POST",
                "/v3/push",
                ["audience": "all", "notification": ["alert": "fine"]],
                as: .basic(other.app.appKey, other.masterSecret)
            )
            #expect(fine.status == 200)
            #expect(try await test.waitForAPNs(otherToken).count == 1)
        }
    }
}

/// APNs refusing an app's credentials, for every copy of a push.
@Suite struct APNsRefusedCredentialsTests {
    /// The first refusal stops the app's queue: the copies behind it fail here without a
    /// request each, reported as `CredentialsRefused` (openapi.yaml's code), the refused
    /// requests with Apple's reason.
    @Test func theFirstRefusalFailsTheRestOfThePushWithoutRequests() async throws {
        try await TestNode.run { test in
            let upload: JSON = [
                "type": "token", "key_id": "KEY7654321", "team_id": "TEAM123456", "bundle_id": "com.example.app",
                "environment": "sandbox", "private_key": JSON(TestCredentials.p8()),
            ]
            let answer = try await test.call("PUT", "/admin/v1/apps/\(test.appKey)/apns", upload, as: .admin)
            #expect(answer.status == 200)

            for index in 0..<30 { _ = try await test.register(token: TestNode.token(960 + index), tags: ["refused"]) }
            test.sandbox.setFaultForEveryRequest(.reject(status: 403, reason: "InvalidProviderToken"))
            let sent = try await test.push(["audience": ["tag": ["refused"]], "notification": ["alert": "x"]])
            let report = try await test.settledReport(sent.msgID) { $0["apns_failed"].int == 30 }
            #expect(report["apns_failed"].int == 30)
            var reasons: [String: Int] = [:]
            for failure in report["apns_failures"].array ?? [] { reasons[failure["reason"].string ?? "?", default: 0] += failure["count"].int ?? 0 }
            // Only the requests on the wire when the first refusal came: one per connection.
            let refusals = test.sandbox.rejections.count
            #expect(refusals >= 1 && refusals <= 2)
            #expect(reasons == ["InvalidProviderToken": refusals, "CredentialsRefused": 30 - refusals], "\(reasons)")
        }
    }
}

/// Provider tokens across an app's two APNs environments.
@Suite struct APNsTokenSharingTests {
    /// Apple counts a second token for the same key as a token change: both environments'
    /// clients send the one token of the app's key.
    @Test func productionAndSandboxClientsOfOneAppSendTheSameProviderToken() async throws {
        try await TestNode.run { test in
            let production = TestNode.token(950)
            let sandbox = TestNode.token(951)
            let http = HeraldAPIClient(baseURL: test.apiURL, appKey: test.appKey)
            _ = try await http.register(platform: "ios", apnsToken: production, apnsEnvironment: "production")
            _ = try await http.register(platform: "ios", apnsToken: sandbox, apnsEnvironment: "sandbox")
            let sent = try await test.push(["audience": "all", "notification": ["alert": "both"]])
            let report = try await test.settledReport(sent.msgID) { $0["apns_sent"].int == 2 }
            #expect(report["apns_sent"].int == 2)
            let tokens = test.sandbox.notifications.map(\.providerToken)
            #expect(tokens.count == 2)
            #expect(tokens.allSatisfy { $0 != nil })
            #expect(Set(tokens).count == 1)
        }
    }
}
