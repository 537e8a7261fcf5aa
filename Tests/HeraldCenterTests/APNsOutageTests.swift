import Foundation
import HeraldAPNsSandbox
import HeraldCenter
import HeraldClient
import HeraldCore
import HeraldNode
import HeraldNodeTesting
import HeraldTestSupport
import Testing

/// The center while APNs fails or stalls: copies are kept and retried at a bounded rate,
/// and each answer is recorded when it comes.
@Suite struct APNsOutageTests {
    /// Polls an async condition every 50 ms; throws once `timeout` has passed.
    private func waitFor(_ what: String, timeout: Duration, _ condition: @Sendable () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw TestFailure("waited \(timeout) for \(what)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The deliveries of a message in this state.
    private func deliveries(_ test: TestNode, _ msgID: String, state: String) async throws -> Int {
        try await test.count("deliveries dl JOIN messages m ON m.id = dl.message_id WHERE m.msg_id = '\(msgID)' AND dl.state = '\(state)'")
    }

    @Test func aServiceUnavailableStormKeepsCopiesWaitingAtABoundedRateAndDeliversThemOnceAfter() async throws {
        let shortOutageSteps: @Sendable (inout HeraldNodeConfiguration) -> Void = { configuration in
            configuration.center.apnsConnections = 1
            configuration.center.apnsCircuitBreaker.minimumOpen = .milliseconds(500)
            configuration.center.apnsCircuitBreaker.maximumOpen = .seconds(2)
            configuration.center.apnsMaxRetryDelay = .seconds(1)
        }
        try await TestNode.run(configure: shortOutageSteps) { test in
            let tokens = (0..<5).map { TestNode.token(700 + $0) }
            var devices: [DeviceCredentials] = []
            for token in tokens { devices.append(try await test.register(token: token, tags: ["storm"])) }
            test.sandbox.setFaultForEveryRequest(.serviceUnavailable)
            let sent = try await test.push([
                "audience": ["tag": ["storm"]], "notification": ["alert": "during the outage"], "options": ["time_to_live": 3600],
            ])
            #expect(sent.status == 200)
            // A window of the outage: a few requests per copy, not one every few tenths of a second.
            try await Task.sleep(for: .seconds(4))
            let requests = test.sandbox.rejections
            for token in tokens {
                #expect(requests.count { $0.deviceToken == token } <= 5)
            }
            #expect(requests.allSatisfy { $0.status == 503 })
            // The copies wait for their next attempt: the time to live lasts.
            #expect(try await deliveries(test, sent.msgID, state: "waiting") == 5)
            #expect(try await deliveries(test, sent.msgID, state: "failed") == 0)
            #expect(
                try await test.count(
                    "deliveries dl JOIN messages m ON m.id = dl.message_id WHERE m.msg_id = '\(sent.msgID)' AND dl.next_attempt_at IS NOT NULL"
                ) == 5
            )
            #expect(try await test.status(sent.msgID, devices[0].registrationID, becomes: "waiting") == "waiting")

            test.sandbox.setFaultForEveryRequest(nil)
            let report = try await test.settledReport(sent.msgID, timeout: .seconds(30)) { $0["apns_sent"].int == 5 }
            #expect(report["apns_sent"].int == 5)
            #expect(report["apns_failed"].int == 0)
            for token in tokens {
                #expect(test.apnsReceived(token).count == 1)
            }
        }
    }

    /// A few streams APNs never answers don't hold back the copies it took: those show as
    /// sent long before the hung ones time out.
    @Test func copiesAPNsTookAreRecordedWhileOthersOfTheirBatchHang() async throws {
        let oneConnectionLongTimeout: @Sendable (inout HeraldNodeConfiguration) -> Void = { configuration in
            configuration.center.apnsConnections = 1
            configuration.center.apnsRequestTimeout = .seconds(30)
        }
        try await TestNode.run(configure: oneConnectionLongTimeout) { test in
            let warm = TestNode.token(800)
            _ = try await test.register(token: warm, alias: "warm")
            let warmUp = try await test.push(["audience": ["alias": ["warm"]], "notification": ["alert": "first"]])
            _ = try await test.settledReport(warmUp.msgID) { $0["apns_sent"].int == 1 }

            let tokens = (0..<20).map { TestNode.token(810 + $0) }
            for token in tokens { _ = try await test.register(token: token, tags: ["batch"]) }
            let hung = Array(tokens.prefix(3))
            for token in hung { test.sandbox.setFault(.neverAnswer, forDevice: token) }
            let sent = try await test.push(["audience": ["tag": ["batch"]], "notification": ["alert": "most get it"]])
            try await waitFor("the 17 answered copies to be recorded as sent", timeout: .seconds(15)) {
                (try? await deliveries(test, sent.msgID, state: "apns")) == 17
            }
            // Recorded while the hung ones were still out (they time out after 30 s).
            #expect(try await deliveries(test, sent.msgID, state: "pending") == 3)
            let report = try await test.call("GET", "/v3/report/received?msg_ids=\(sent.msgID)")
            let first = report.json["reports"][0]
            #expect(first["apns_sent"].int == 17)
        }
    }

    /// A send without an answer is recorded with Herald's documented code, not an error's
    /// description.
    @Test func aSendWithoutAnAnswerIsRecordedAsTimeout() async throws {
        let shortTimeout: @Sendable (inout HeraldNodeConfiguration) -> Void = { configuration in
            configuration.center.apnsRequestTimeout = .milliseconds(500)
            configuration.center.apnsRetryDelay = .seconds(60)
        }
        try await TestNode.run(configure: shortTimeout) { test in
            let token = TestNode.token(850)
            let device = try await test.register(token: token, alias: "silent")
            test.sandbox.setFault(.neverAnswer, forDevice: token)
            let sent = try await test.push(["audience": ["alias": ["silent"]], "notification": ["alert": "anyone?"]])
            try await waitFor("the copy to wait for a retry", timeout: .seconds(10)) {
                (try? await deliveries(test, sent.msgID, state: "waiting")) == 1
            }
            let response = try await test.call(
                "POST",
                "/v3/report/status/message",
                ["msg_id": JSON(sent.msgID), "registration_ids": [JSON(device.registrationID)]]
            )
            let status = response.json["statuses"][device.registrationID]
            #expect(status["status"].string == "waiting")
            #expect(status["apns_reason"].string == "Timeout")
        }
    }
}
