import Foundation
import HeraldAPNsSandbox
import HeraldCenter
import HeraldCore
import HeraldKit
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

    /// Every attempt of one copy is the same notification to APNs: the same `apns-id` (and
    /// collapse id), so a request sent again after its deadline ran out, which APNs may have
    /// taken, is not a second notification. Another message to the device has another id.
    @Test func aCopySentAgainKeepsItsAPNsID() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(870)
            _ = try await test.register(token: token, alias: "retried")
            test.sandbox.setFault(.serviceUnavailable, forDevice: token)
            let first = try await test.push(["audience": ["alias": ["retried"]], "notification": ["alert": "again"]])
            try await waitFor("the copy to wait for a retry", timeout: .seconds(10)) {
                (try? await deliveries(test, first.msgID, state: "waiting")) == 1
            }
            let refused = try #require(test.sandbox.rejections.last { $0.deviceToken == token }?.apnsID)
            test.sandbox.setFault(nil, forDevice: token)
            let delivered = try await test.waitForAPNs(token, timeout: .seconds(30))
            #expect(delivered.map(\.apnsID) == [refused])
            #expect(Set(test.sandbox.rejections.filter { $0.deviceToken == token }.map(\.apnsID)) == [refused])

            let second = try await test.push(["audience": ["alias": ["retried"]], "notification": ["alert": "another"]])
            #expect(second.status == 200)
            let both = try await test.waitForAPNs(token, count: 2)
            #expect(both.count == 2 && both[1].apnsID != refused)
        }
    }

    /// A retry is routed again with the device as it is when it is due: a token that died
    /// meanwhile (as another copy's Unregistered marks it) gets no retry; the copy waits in
    /// the inbox for the device's next connection, with no retry left pending.
    @Test func aRetryForATokenThatDiedMeanwhileIsNotSent() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(871)
            _ = try await test.register(token: token, alias: "dying")
            test.sandbox.setFault(.serviceUnavailable, forDevice: token)
            let sent = try await test.push(["audience": ["alias": ["dying"]], "notification": ["alert": "too late"]])
            try await waitFor("the copy to wait for a retry", timeout: .seconds(10)) {
                (try? await deliveries(test, sent.msgID, state: "waiting")) == 1
            }
            let refusals = test.sandbox.rejections.count { $0.deviceToken == token }
            try await test.stores.sql.query("UPDATE devices SET token_valid = false, token_invalidated_at = now()")
            test.sandbox.setFault(nil, forDevice: token)
            try await waitFor("the retry to be handled", timeout: .seconds(60)) {
                (try? await test.count("deliveries WHERE next_attempt_at IS NOT NULL")) == 0
            }
            #expect(try await deliveries(test, sent.msgID, state: "waiting") == 1)
            #expect(test.sandbox.rejections.count { $0.deviceToken == token } == refusals)
            #expect(test.apnsReceived(token).isEmpty)
        }
    }

    /// A retry whose request APNs never answers holds only itself: a retry due after it
    /// goes out while it still waits for its answer (retries were claimed a batch at a
    /// time, each batch waiting for its slowest send).
    @Test func aRetryAPNsNeverAnswersDoesNotHoldTheRetriesDueAfterIt() async throws {
        let hangs: @Sendable (inout HeraldNodeConfiguration) -> Void = { configuration in
            configuration.apns.requestTimeout = .seconds(30)
            configuration.apns.circuitBreaker.failureThreshold = 1000
        }
        try await TestNode.run(configure: hangs) { test in
            // A delivery first, so the client's connection takes more than one stream.
            let healthy = TestNode.token(880)
            _ = try await test.register(token: healthy, alias: "healthy")
            _ = try await test.push(["audience": ["alias": ["healthy"]], "notification": ["alert": "warm up"]])
            #expect(try await test.waitForAPNs(healthy).count == 1)

            let stalled = TestNode.token(881)
            _ = try await test.register(token: stalled, alias: "stalled")
            test.sandbox.setFault(.serviceUnavailable, forDevice: stalled)
            let first = try await test.push(["audience": ["alias": ["stalled"]], "notification": ["alert": "hangs on retry"]])
            try await waitFor("the first copy to wait for a retry", timeout: .seconds(10)) {
                (try? await deliveries(test, first.msgID, state: "waiting")) == 1
            }
            // Its retry is claimed (its next attempt pushed a lease ahead) and never answered.
            test.sandbox.setFault(.neverAnswer, forDevice: stalled)
            try await waitFor("the first copy's retry to be claimed", timeout: .seconds(10)) {
                try await test.count(
                    "deliveries dl JOIN messages m ON m.id = dl.message_id WHERE m.msg_id = '\(first.msgID)' AND dl.next_attempt_at > now() + interval '30 seconds'"
                ) == 1
            }

            let later = TestNode.token(882)
            _ = try await test.register(token: later, alias: "later")
            test.sandbox.setFault(.serviceUnavailable, forDevice: later)
            let second = try await test.push(["audience": ["alias": ["later"]], "notification": ["alert": "due after"]])
            try await waitFor("the second copy to wait for a retry", timeout: .seconds(10)) {
                (try? await deliveries(test, second.msgID, state: "waiting")) == 1
            }
            test.sandbox.setFault(nil, forDevice: later)
            #expect(try await test.waitForAPNs(later, timeout: .seconds(20)).count == 1)
            // ... while the first retry still waits for its answer (no Timeout recorded yet).
            let reasons = try await test.stores.sql.query(
                "SELECT dl.apns_reason FROM deliveries dl JOIN messages m ON m.id = dl.message_id WHERE m.msg_id = \(first.msgID)",
                logger: TestDatabase.logger
            )
            for try await reason in reasons.decode(String?.self) { #expect(reason == "ServiceUnavailable") }
        }
    }

    @Test func aServiceUnavailableStormKeepsCopiesWaitingAtABoundedRateAndDeliversThemOnceAfter() async throws {
        let shortOutageSteps: @Sendable (inout HeraldNodeConfiguration) -> Void = { configuration in
            configuration.apns.connections = 1
            configuration.apns.circuitBreaker.minimumOpen = .milliseconds(500)
            configuration.apns.circuitBreaker.maximumOpen = .seconds(2)
            configuration.center.maxRetryDelay = .seconds(1)
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
            configuration.apns.connections = 1
            configuration.apns.requestTimeout = .seconds(30)
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
            configuration.apns.requestTimeout = .milliseconds(500)
            configuration.center.retryDelay = .seconds(60)
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
