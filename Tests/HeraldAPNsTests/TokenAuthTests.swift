import Foundation
import HeraldAPNs
import HeraldAPNsSandbox
import Logging
import Testing

@Suite("Token auth against the sandbox")
struct TokenAuthTests {
    @Test func oneProviderTokenIsSharedByEveryConnectionAndRequest() async throws {
        try await withSandboxAndClient(connectionCount: 4) { sandbox, client async throws in
            try await waitUntil { client.openConnectionCount == 4 }
            try await withThrowingTaskGroup(of: APNsOutcome.self) { group in
                for index in 0..<200 {
                    group.addTask { try await client.send(alert("n\(index)", to: deviceToken(index))) }
                }
                for try await outcome in group {
                    guard case .delivered = outcome else {
                        Issue.record("not delivered: \(outcome)")
                        continue
                    }
                }
            }
            let recorded = sandbox.notifications
            #expect(recorded.count == 200)
            #expect(Set(recorded.compactMap(\.providerToken)).count == 1)
            #expect(Set(recorded.map(\.connectionID)).count > 1)
            #expect(client.signedTokenCount == 1)
        }
    }

    @Test func tokenIsRefreshedAfterFortyFiveMinutesWithoutChurn() async throws {
        let clock = ManualClock()
        try await withSandboxAndClient(clientClock: clock, sandboxClock: clock) { sandbox, client async throws in
            for index in 0..<20 {
                _ = try await client.send(alert("early \(index)", to: deviceToken(index)))
            }
            clock.advance(by: 46 * 60)
            for index in 0..<20 {
                let notification = alert("late \(index)", to: deviceToken(index))
                #expect(try await client.send(notification) == .delivered(apnsID: notification.apnsID))
            }
            #expect(sandbox.rejections.isEmpty)
            #expect(client.signedTokenCount == 2)
            let tokens = sandbox.notifications.compactMap(\.providerToken)
            #expect(Set(tokens).count == 2)
            #expect(Set(tokens.prefix(20)).count == 1)
            #expect(Set(tokens.suffix(20)).count == 1)
        }
    }

    @Test func expiredProviderTokenIsReplacedAndTheNotificationDelivered() async throws {
        let clientClock = ManualClock()
        let sandboxClock = ManualClock(clientClock.now)
        try await withSandboxAndClient(clientClock: clientClock, sandboxClock: sandboxClock) { sandbox, client async throws in
            _ = try await client.send(alert("first"))
            // The client thinks its token is 25 minutes old; APNs sees it 65 minutes old.
            clientClock.advance(by: 25 * 60)
            sandboxClock.advance(by: 65 * 60)
            let notification = alert("after expiry")
            #expect(try await client.send(notification) == .delivered(apnsID: notification.apnsID))
            #expect(sandbox.rejections.map(\.reason) == ["ExpiredProviderToken"])
            #expect(client.signedTokenCount == 2)
            let delivered = try #require(sandbox.notifications.last)
            #expect(delivered.providerToken != sandbox.notifications.first?.providerToken)
            #expect(delivered.connectionID != sandbox.rejections.first?.connectionID)
        }
    }

    /// Said, not silent: the wait that follows is logged as a warning, once per token.
    @Test func youngTokenCalledExpiredIsNotChurned() async throws {
        let clientClock = ManualClock()
        let sandboxClock = ManualClock(clientClock.now.addingTimeInterval(2 * 3600))
        let logs = RecordingLogHandler()
        let logger = Logger(label: "test") { _ in logs }
        try await withSandboxAndClient(clientClock: clientClock, sandboxClock: sandboxClock, logger: logger) { sandbox, client async throws in
            for text in ["clock skew", "again"] {
                let outcome = try await client.send(alert(text))
                guard case .retryLater(let reason, _) = outcome else {
                    Issue.record("expected retryLater, got \(outcome)")
                    return
                }
                #expect(reason == .expiredProviderToken)
            }
            #expect(client.signedTokenCount == 1)
            #expect(sandbox.notifications.isEmpty)
            let warnings = logs.records.filter { $0.level == .warning && $0.message.contains("provider token expired") }
            #expect(warnings.count == 1, "\(logs.records.map(\.message))")
            #expect(warnings.first?.message.contains("clock") == true)
        }
    }
}
