import Foundation
import HeraldAPNs
import HeraldAPNsSandbox
import Testing

@Suite("APNs errors and their actions")
struct ErrorHandlingTests {
    @Test func unregisteredTokenIsInvalidSinceItsTimestamp() async throws {
        try await withSandboxAndClient { sandbox, client async throws in
            let since = Date(timeIntervalSince1970: 1_700_000_000.123)
            sandbox.markUnregistered(deviceToken(10), since: since)
            let outcome = try await client.send(alert("gone", to: deviceToken(10)))
            guard case .invalidToken(let reason, let reportedSince) = outcome else {
                Issue.record("expected invalidToken, got \(outcome)")
                return
            }
            #expect(reason == .unregistered)
            let reported = try #require(reportedSince)
            #expect(abs(reported.timeIntervalSince(since)) < 0.002)
        }
    }

    @Test func malformedDeviceTokenInvalidatesTheToken() async throws {
        try await withSandboxAndClient { sandbox, client async throws in
            let outcome = try await client.send(alert("odd", to: "abc"))
            #expect(outcome == .invalidToken(reason: .badDeviceToken, since: nil))
            #expect(sandbox.rejections.map(\.reason) == ["BadDeviceToken"])
        }
    }

    @Test func tokenForAnotherTopicFailsTheMessage() async throws {
        try await withSandboxAndClient { sandbox, client async throws in
            sandbox.registerDevice(deviceToken(11), topic: "com.example.other")
            let outcome = try await client.send(alert("wrong app", to: deviceToken(11)))
            #expect(outcome == .failed(reason: .deviceTokenNotForTopic, status: 400))
            #expect(sandbox.notifications.isEmpty)
        }
    }

    @Test func unknownSigningKeyBreaksCredentialsAndStopsSendingForTheApp() async throws {
        try await withSandboxAndClient(auth: .unregisteredToken) { sandbox, client async throws in
            let first = try await client.send(alert("one"))
            #expect(first == .credentialsBroken(reason: .invalidProviderToken))
            #expect(client.credentialsProblem == .invalidProviderToken)

            // Not sent: refused earlier, which the outcome says apart from APNs' answer.
            let second = try await client.send(alert("two"))
            #expect(second == .credentialsRefused(reason: .invalidProviderToken))
            #expect(sandbox.rejections.count == 1)
            #expect(sandbox.notifications.isEmpty)
        }
    }

    @Test func tooManyRequestsToOneTokenMeansRetryLater() async throws {
        try await withSandboxAndClient { sandbox, client async throws in
            sandbox.setFault(.reject(status: 429, reason: "TooManyRequests"), forDevice: deviceToken(12))
            let outcome = try await client.send(alert("busy", to: deviceToken(12)))
            #expect(outcome == .retryLater(reason: .tooManyRequests, after: .seconds(30)))
            #expect(sandbox.rejections.count == 1)
        }
    }

    @Test func oneServerErrorIsRetriedAndDeliveredOnce() async throws {
        try await withSandboxAndClient { sandbox, client async throws in
            _ = try await client.send(alert("warm up"))
            sandbox.injectFaults([.internalServerError])
            let notification = alert("after a 500")
            #expect(try await client.send(notification) == .delivered(apnsID: notification.apnsID))
            #expect(sandbox.rejections.map(\.status) == [500])
            #expect(sandbox.notifications.filter { $0.apnsID == notification.apnsID }.count == 1)
        }
    }

    /// A new connection's first request that APNs never answers doesn't hold the send for
    /// the whole request timeout (nor, on a token connection, which carries one stream
    /// until its first success, every send behind it): after the first-request deadline
    /// the connection is closed and the send goes on another, under the same apns-id.
    @Test func aFirstRequestNeverAnsweredOnANewConnectionGoesOnAnother() async throws {
        let shortFirstRequest: (inout APNsClient.Configuration) -> Void = { $0.firstRequestTimeout = .milliseconds(500) }
        try await withSandboxAndClient(requestTimeout: .seconds(60), configure: shortFirstRequest) { sandbox, client async throws in
            sandbox.injectFaults([.neverAnswer])
            let notification = alert("first on a new connection")
            #expect(try await client.send(notification) == .delivered(apnsID: notification.apnsID))
            #expect(sandbox.notifications.filter { $0.apnsID == notification.apnsID }.count == 1)
        }
    }

    @Test func persistentServiceUnavailableEndsInRetryLaterAfterEveryAttempt() async throws {
        try await withSandboxAndClient { sandbox, client async throws in
            sandbox.setFault(.serviceUnavailable, forDevice: deviceToken(13))
            let outcome = try await client.send(alert("down", to: deviceToken(13)))
            guard case .retryLater(let reason, _) = outcome else {
                Issue.record("expected retryLater, got \(outcome)")
                return
            }
            #expect(reason == .serviceUnavailable)
            #expect(sandbox.rejections.count == client.configuration.maxAttempts)
        }
    }

    @Test func unknownReasonIsKeptVerbatim() async throws {
        try await withSandboxAndClient { sandbox, client async throws in
            sandbox.setFault(.reject(status: 400, reason: "SomethingNew"), forDevice: deviceToken(14))
            let outcome = try await client.send(alert("new", to: deviceToken(14)))
            #expect(outcome == .failed(reason: .unknown("SomethingNew"), status: 400))
        }
    }

    /// Error answers carry a body: more of them than the 64 KiB initial connection window
    /// must keep flowing on one connection, so the client has to give the window back.
    @Test func errorBodiesBeyondTheConnectionWindowKeepFlowing() async throws {
        try await withSandboxAndClient(connectionCount: 1) { sandbox, client async throws in
            let reason = "Reason" + String(repeating: "x", count: 250)
            sandbox.setFault(.reject(status: 400, reason: reason), forDevice: deviceToken(16))
            let outcomes = try await withThrowingTaskGroup(of: APNsOutcome.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        var last = APNsOutcome.retryLater(reason: .unknown(""), after: .zero)
                        for _ in 0..<30 { last = try await client.send(alert("verbose", to: deviceToken(16))) }
                        return last
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { $0 == .failed(reason: .unknown(reason), status: 400) })
            #expect(sandbox.rejections.count == 600)
        }
    }

    @Test func requestThatIsNeverAnsweredFailsAtItsDeadline() async throws {
        try await withSandboxAndClient { sandbox, client async throws in
            _ = try await client.send(alert("warm up"))
            sandbox.setFault(.neverAnswer, forDevice: deviceToken(15))
            await #expect(throws: APNsError.deadlineExceeded) {
                try await client.send(alert("silence", to: deviceToken(15)), timeout: .milliseconds(500))
            }
            let next = alert("still works")
            #expect(try await client.send(next) == .delivered(apnsID: next.apnsID))
        }
    }

    @Test func reconnectsAfterTheConnectionsAreLost() async throws {
        try await withSandboxAndClient { sandbox, client async throws in
            _ = try await client.send(alert("before"))
            let connectionsBefore = sandbox.acceptedConnectionCount
            await sandbox.dropConnections()
            let after = alert("after")
            #expect(try await client.send(after) == .delivered(apnsID: after.apnsID))
            #expect(sandbox.acceptedConnectionCount > connectionsBefore)
            #expect(sandbox.notifications.filter { $0.apnsID == after.apnsID }.count == 1)
        }
    }

    @Test func goAwayMidFlightLosesNothingAndDeliversEachNotificationOnce() async throws {
        try await withSandboxAndClient { sandbox, client async throws in
            sandbox.goAway(afterAccepting: 40, reason: "Shutdown")
            let notifications = (0..<300).map { alert("n\($0)", to: deviceToken(100 + $0)) }
            let outcomes = try await withThrowingTaskGroup(of: APNsOutcome.self) { group in
                for notification in notifications {
                    group.addTask { try await client.send(notification) }
                }
                return try await group.reduce(into: [APNsOutcome]()) { $0.append($1) }
            }
            #expect(outcomes.count == 300)
            #expect(outcomes.allSatisfy { if case .delivered = $0 { true } else { false } })
            let recorded = sandbox.notifications.map(\.apnsID)
            #expect(recorded.count == 300)
            #expect(Set(recorded) == Set(notifications.map(\.apnsID)))
            #expect(client.lastGoAwayReason == "Shutdown")
        }
    }
}
