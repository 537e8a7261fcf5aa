import Foundation
import HeraldAPNs
import HeraldAPNsSandbox
import Logging
import NIOConcurrencyHelpers
import Testing

/// APNs failing for everything: a 5xx storm, refused credentials.
@Suite("APNs outages")
struct OutageTests {
    private func sendAll(_ notifications: [APNsNotification], with client: APNsClient) async throws -> [APNsOutcome] {
        try await withThrowingTaskGroup(of: APNsOutcome.self) { group in
            for notification in notifications {
                group.addTask { try await client.send(notification) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// Every request answered 503: once the circuit opens, sends come back at once
    /// without a request, instead of each notification trying again and again.
    @Test func aServiceUnavailableStormOpensTheCircuitAndStopsTheRequests() async throws {
        let longOpening: (inout APNsClient.Configuration) -> Void = { $0.circuitBreaker.minimumOpen = .seconds(60) }
        try await withSandboxAndClient(connectionCount: 2, configure: longOpening) { sandbox, client async throws in
            let warmUp = alert("warm up")
            #expect(try await client.send(warmUp) == .delivered(apnsID: warmUp.apnsID))
            sandbox.setFaultForEveryRequest(.serviceUnavailable)
            let first = try await sendAll((0..<100).map { alert("storm \($0)", to: deviceToken(200 + $0)) }, with: client)
            #expect(first.allSatisfy { if case .delivered = $0 { false } else { true } })
            // Each went out at most once, but for the few answered before the circuit opened.
            #expect(sandbox.rejections.count <= 100 + 3)
            #expect(client.isCircuitOpen)
            let before = sandbox.rejections.count
            let second = try await sendAll((0..<100).map { alert("still down \($0)", to: deviceToken(300 + $0)) }, with: client)
            #expect(second.allSatisfy { if case .circuitOpen(.serviceUnavailable, _) = $0 { true } else { false } })
            #expect(sandbox.rejections.count == before)
        }
    }

    /// After the outage, one probe finds APNs up again and the circuit closes.
    @Test func theCircuitClosesWhenAProbeIsAnswered() async throws {
        let shortOpening: (inout APNsClient.Configuration) -> Void = { $0.circuitBreaker.minimumOpen = .milliseconds(100) }
        try await withSandboxAndClient(connectionCount: 1, configure: shortOpening) { sandbox, client async throws in
            sandbox.setFaultForEveryRequest(.serviceUnavailable)
            for index in 0..<3 {
                _ = try await client.send(alert("down \(index)", to: deviceToken(400 + index)))
                if client.isCircuitOpen { break }
            }
            #expect(client.isCircuitOpen)
            sandbox.setFaultForEveryRequest(nil)
            try await Task.sleep(for: .milliseconds(150))
            let probe = alert("up again")
            #expect(try await client.send(probe) == .delivered(apnsID: probe.apnsID))
            #expect(!client.isCircuitOpen)
            #expect(sandbox.notifications.map(\.apnsID) == [probe.apnsID])
        }
    }

    /// APNs refused the token: the rest of the queue fails here, without a request, and the
    /// refusal is logged once.
    @Test func refusedCredentialsStopTheQueueAtTheFirstRefusal() async throws {
        let logs = RecordingLogHandler()
        let logger = Logger(label: "test") { _ in logs }
        try await withSandboxAndClient(auth: .unregisteredToken, connectionCount: 2, logger: logger) { sandbox, client async throws in
            try await waitUntil { client.openConnectionCount == 2 }
            let outcomes = try await sendAll((0..<300).map { alert("n\($0)", to: deviceToken(500 + $0)) }, with: client)
            #expect(outcomes.count == 300)
            // APNs' answer for what was on the wire when the first refusal came (one stream
            // per connection until a request succeeds); the rest was not sent.
            let answered = outcomes.filter { $0 == .credentialsBroken(reason: .invalidProviderToken) }.count
            let notSent = outcomes.filter { $0 == .credentialsRefused(reason: .invalidProviderToken) }.count
            #expect(answered + notSent == 300)
            #expect(answered == sandbox.rejections.count)
            #expect(sandbox.rejections.count <= 2)
            #expect(sandbox.rejections.allSatisfy { $0.reason == "InvalidProviderToken" })
            #expect(logs.records.filter { $0.level >= .error }.count == 1)
        }
    }
}
