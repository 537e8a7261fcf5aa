import Crypto
import Foundation
import HeraldAPNs
import HeraldAPNsSandbox
import HeraldCore
import HeraldRouting
import Logging
import NIOConcurrencyHelpers
import Testing

/// The APNs channel alone, against the APNs sandbox, with a store of the test's own: what
/// it reports for each copy, and what it writes to its store.
@Suite struct APNsChannelTests {
    /// What the channel asked of its store.
    final class Store: APNsChannelStore {
        let credentials: APNsCredentials
        let broken: String?
        let invalidated = NIOLockedValueBox<[(deviceID: Int64, token: String, voip: Bool, event: Bool)]>([])
        let brokenMarks = NIOLockedValueBox<[String]>([])

        init(credentials: APNsCredentials, broken: String? = nil) {
            self.credentials = credentials
            self.broken = broken
        }

        func apnsCredentials(appID: Int64) async throws -> (credentials: APNsCredentials, updatedAt: Date, brokenReason: String?)? {
            (credentials, Date(timeIntervalSince1970: 1), broken)
        }

        func markAPNsCredentialsBroken(appID: Int64, reason: String) async throws {
            brokenMarks.withLockedValue { $0.append(reason) }
        }

        func invalidateToken(deviceID: Int64, token: String, since: Date?, voip: Bool, event: (messageID: Int64, reason: String)?) async throws {
            invalidated.withLockedValue { $0.append((deviceID, token, voip, event != nil)) }
        }

        func liveActivityTokens(deviceIDs: [Int64], target: LiveActivityTarget) async throws -> [Int64: String] { [:] }
    }

    static let token = String(repeating: "ab", count: 32)
    static let deadToken = String(repeating: "cd", count: 32)

    @Test func eachCopyIsReportedAndADeadTokenIsInvalidatedInTheStore() async throws {
        try await withChannel { sandbox, channel, store in
            sandbox.markUnregistered(Self.deadToken, since: Date(timeIntervalSince1970: 1_700_000_000))
            let push = try Self.push(#"{"platform": "ios", "audience": "all", "notification": {"alert": "Hello"}}"#)
            let copies = [
                Self.copy(push, deviceID: 1, token: Self.token),
                Self.copy(push, deviceID: 2, token: Self.deadToken),
                Self.copy(push, deviceID: 3, token: nil),
            ]
            let reports = NIOLockedValueBox<[Int: ChannelOutcome]>([:])
            await channel.send(copies) { index, outcome in
                reports.withLockedValue { #expect($0.updateValue(outcome, forKey: index) == nil, "reported twice") }
            }
            let outcomes = reports.withLockedValue { $0 }
            #expect(outcomes.count == 3)
            guard case .sent(let receipt) = outcomes[0] else {
                Issue.record("not sent: \(String(describing: outcomes[0]))")
                return
            }
            #expect(receipt.status == 200 && receipt.requestID != nil)
            #expect(outcomes[1] == .tokenDead(reason: "Unregistered", receipt: ChannelReceipt(requestID: copies[1].expectedID)))
            #expect(outcomes[2] == .notConfigured, "no token: nothing to send it with")
            let invalidated = store.invalidated.withLockedValue { $0 }
            #expect(invalidated.count == 1)
            #expect(invalidated.first?.deviceID == 2 && invalidated.first?.token == Self.deadToken && invalidated.first?.voip == false)
            #expect(invalidated.first?.event == true, "the copy records events: the invalidation writes one")
            #expect(sandbox.notifications.count == 1)
        }
    }

    @Test func refusedCredentialsSendNothing() async throws {
        try await withChannel(broken: "InvalidProviderToken") { sandbox, channel, _ in
            let push = try Self.push(#"{"platform": "ios", "audience": "all", "notification": {"alert": "Hello"}}"#)
            let reported = NIOLockedValueBox<[ChannelOutcome]>([])
            await channel.send([Self.copy(push, deviceID: 1, token: Self.token)]) { _, outcome in reported.withLockedValue { $0.append(outcome) } }
            #expect(reported.withLockedValue { $0 } == [.notConfigured])
            #expect(sandbox.notifications.isEmpty)
        }
    }

    @Test func aRecallIsASilentPushAndNotAnotherRoutesCommand() async throws {
        try await withChannel { sandbox, channel, _ in
            let route = RoutePlanner.Route.apns(APNsRoute(apnsProduction: nil, deviceEnvironment: .sandbox))
            let recall = ChannelRecall(
                appID: 1,
                deviceID: 1,
                token: Self.token,
                commandID: "1234567890123456789",
                identifiers: ["a", "b"],
                expiresAt: Date().addingTimeInterval(600),
                route: route
            )
            #expect(await channel.sendRecall(recall))
            var fcm = recall
            fcm.route = .fcm
            #expect(!(await channel.sendRecall(fcm)), "a recall routed to another channel isn't sent here")
            let sent = try #require(sandbox.notifications.first)
            #expect(sandbox.notifications.count == 1)
            #expect(sent.pushType == "background" && sent.priority == 5)
        }
    }

    static func push(_ json: String) throws -> Push {
        try JSONDecoder().decode(PushRequest.self, from: Data(json.utf8)).validated()
    }

    static func copy(_ push: Push, deviceID: Int64, token: String?) -> ChannelCopy {
        ChannelCopy(
            message: ChannelMessage(
                appID: 1,
                messageID: 10,
                msgID: "1000000000000000001",
                push: push,
                createdAt: Date(),
                expiresAt: Date().addingTimeInterval(3600),
                recordsEvents: true
            ),
            deviceID: deviceID,
            token: token,
            route: .apns(APNsRoute(apnsProduction: nil, deviceEnvironment: .sandbox)),
            attempts: 0
        )
    }

    /// A sandbox, and a running channel whose app's token key the sandbox knows.
    func withChannel(broken: String? = nil, _ body: (APNsSandbox, APNsChannel, Store) async throws -> Void) async throws {
        let sandbox = try await APNsSandbox.start(configuration: .init(transport: .plaintext))
        let key = P256.Signing.PrivateKey()
        sandbox.registerSigningKey(keyID: testKeyID, teamID: testTeamID, publicKey: key.publicKey)
        let credentials = APNsCredentials(
            auth: .token(keyID: testKeyID, teamID: testTeamID, privateKeyPEM: key.pemRepresentation),
            bundleID: testBundleID,
            environment: .sandbox
        )
        let store = Store(credentials: credentials, broken: broken)
        var configuration = APNsChannelConfiguration()
        configuration.routing = .sandbox(.init(host: "127.0.0.1", port: sandbox.port, transport: .plaintext) { _ in })
        configuration.connections = 1
        let channel = APNsChannel(configuration: configuration, store: store, logger: Logger(label: "test"))
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await channel.run() }
                defer { group.cancelAll() }
                try await body(sandbox, channel, store)
            }
        } catch {
            await sandbox.shutdown()
            throw error
        }
        await sandbox.shutdown()
    }
}

extension ChannelCopy {
    /// The apns-id every attempt of this copy's notification carries.
    fileprivate var expectedID: UUID {
        APNsNotification.copyID(msgID: msgID, deviceToken: token ?? "", pushType: .alert)
    }
}
