import Foundation
import HeraldAPNsSandbox
import HeraldCore
import HeraldKit
import HeraldNodeTesting
import HeraldTestSupport
import Testing

/// Recalls that reach iOS devices over APNs as silent pushes, which Apple throttles: one
/// per device and recall.
@Suite struct APNsRecallTests {
    private let isRecall: @Sendable (RecordedNotification) -> Bool = { $0.json["herald-recall"] != .null }

    private func waitForRecallJobs(_ test: TestNode) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while try await test.count("push_jobs WHERE kind = 'recall'") > 0 {
            guard ContinuousClock.now < deadline else { throw TestFailure("the recall jobs did not finish") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test func aRecallByIdentifierSendsOneSilentPushPerDevice() async throws {
        try await TestNode.run { test in
            let tokens = (0..<3).map { TestNode.token(900 + $0) }
            for token in tokens { _ = try await test.register(token: token, tags: ["news"]) }
            let sent = try await test.push([
                "audience": ["tag": ["news"]], "notification": ["alert": "wrong headline"], "options": ["identifier": "headline-1"],
            ])
            _ = try await test.settledReport(sent.msgID) { $0["apns_sent"].int == 3 }
            let recalled = try await test.call("POST", "/v3/push/recall", ["identifiers": ["headline-1"]])
            #expect(recalled.status == 200)
            for token in tokens { _ = try await test.waitForAPNs(token, matching: isRecall) }
            try await waitForRecallJobs(test)
            for token in tokens {
                let centre = test.sandbox.notificationCentre(for: token)
                #expect(centre.background.count == 1)
                #expect(centre.shown.isEmpty)
            }
        }
    }

    @Test func recallingAReplacedNotificationByItsIdentifierSendsOneSilentPushPerDevice() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(910)
            _ = try await test.register(token: token, alias: "reader")
            let first = try await test.push([
                "audience": ["alias": ["reader"]], "notification": ["alert": "1-0"], "options": ["identifier": "score"],
            ])
            _ = try await test.settledReport(first.msgID) { $0["apns_sent"].int == 1 }
            let second = try await test.push(["audience": ["alias": ["reader"]], "notification": ["alert": "2-0"], "options": ["replace": "score"]])
            _ = try await test.settledReport(second.msgID) { $0["apns_sent"].int == 1 }
            #expect(try await test.call("POST", "/v3/push/recall", ["identifiers": ["score"]]).status == 200)
            _ = try await test.waitForAPNs(token, matching: isRecall)
            try await waitForRecallJobs(test)
            let centre = test.sandbox.notificationCentre(for: token)
            #expect(centre.background.count == 1)
            #expect(centre.shown.isEmpty)
        }
    }

    @Test func recallingAnIdentifierAgainAfterItWasReusedReachesTheDeviceAgain() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(920)
            _ = try await test.register(token: token, alias: "again")
            for round in 1...2 {
                let sent = try await test.push([
                    "audience": ["alias": ["again"]], "notification": ["alert": "sale \(round)"], "options": ["identifier": "sale"],
                ])
                _ = try await test.settledReport(sent.msgID) { $0["apns_sent"].int == 1 }
                #expect(try await test.call("DELETE", "/v3/push/\(sent.msgID)").status == 200)
                _ = try await test.waitForAPNs(token, count: round, matching: isRecall)
                try await waitForRecallJobs(test)
            }
            let centre = test.sandbox.notificationCentre(for: token)
            #expect(centre.background.count == 2)
            #expect(centre.shown.isEmpty)
        }
    }
}
