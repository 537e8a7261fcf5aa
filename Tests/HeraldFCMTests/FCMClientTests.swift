import Foundation
import HeraldCore
import HeraldFCM
import HeraldFCMSandbox
import Logging
import Testing

/// HeraldFCM's client against the FCM sandbox, over HTTP/2 and TLS on loopback.
@Suite struct FCMClientTests {
    static func started() async throws -> (FCMSandbox, FCMClient) {
        let sandbox = try await FCMSandbox.start()
        let client = FCMClient(
            endpoints: .init(sendBase: sandbox.baseURL, tokenURL: sandbox.tokenURL, trustedCertificatePEMs: [sandbox.certificatePEM]),
            logger: Logger(label: "test")
        )
        return (sandbox, client)
    }

    static func push(_ body: String) throws -> Push {
        try JSONDecoder().decode(PushRequest.self, from: Data(body.utf8)).validated()
    }

    @Test func sendsWithOneAccessTokenSharedByEveryCopy() async throws {
        let (sandbox, client) = try await Self.started()
        let account = try TestServiceAccount().account
        try sandbox.admit(account)
        let push = try Self.push(
            #"{"platform":"all","audience":"all","notification":{"alert":"Hi","android":{"title":"T","extras":{"n":1,"s":"x"}}}}"#
        )
        let outcomes = await withTaskGroup(of: FCMOutcome.self) { group in
            for n in 0..<20 {
                group.addTask {
                    await client.send(
                        FCMMessage(push: push, msgID: "m\(n)", token: fcmToken(n), expiresAt: Date().addingTimeInterval(60)),
                        account: account
                    )
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.allSatisfy { if case .delivered = $0 { true } else { false } })
        #expect(sandbox.receivedCount == 20)
        #expect(sandbox.tokenRequests == 1)
        let first = try #require(sandbox.received.first)
        #expect(first.message["notification"]?["title"]?.string == "T")
        #expect(first.message["notification"]?["body"]?.string == "Hi")
        #expect(first.message["data"]?["n"]?.string == "1")
        #expect(first.message["android"]?["priority"]?.string == "HIGH")
        try await client.shutdown()
        await sandbox.shutdown()
    }

    @Test func anExpiredAccessTokenIsReplacedOnce() async throws {
        let (sandbox, client) = try await Self.started()
        let account = try TestServiceAccount().account
        try sandbox.admit(account)
        let push = try Self.push(#"{"platform":"android","audience":"all","notification":{"alert":"Hi"}}"#)
        let message = FCMMessage(push: push, msgID: "m", token: fcmToken(1), expiresAt: Date().addingTimeInterval(60))
        #expect(await client.send(message, account: account) == .delivered(name: "projects/herald-test/messages/1"))
        sandbox.expireAccessTokens()
        #expect(await client.send(message, account: account) == .delivered(name: "projects/herald-test/messages/2"))
        #expect(sandbox.tokenRequests == 2)
        try await client.shutdown()
        await sandbox.shutdown()
    }

    @Test func refusedCredentialsSendNothing() async throws {
        let (sandbox, client) = try await Self.started()
        let account = try TestServiceAccount().account
        // Not admitted: the token endpoint doesn't know the account.
        let push = try Self.push(#"{"platform":"android","audience":"all","notification":{"alert":"Hi"}}"#)
        let outcome = await client.send(FCMMessage(push: push, msgID: "m", token: fcmToken(1), expiresAt: Date()), account: account)
        guard case .credentialsRefused(let reason) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        #expect(reason.contains("invalid_grant"))
        #expect(sandbox.receivedCount == 0)
        // A key that isn't the account's: the signature doesn't verify.
        try sandbox.admit(account)
        var forged = try TestServiceAccount().account
        forged.clientEmail = account.clientEmail
        forged.privateKeyID = account.privateKeyID
        guard
            case .credentialsRefused(let forgedReason) = await client.send(
                FCMMessage(push: push, msgID: "m", token: fcmToken(1), expiresAt: Date()),
                account: forged
            )
        else {
            Issue.record("a forged key was taken")
            return
        }
        #expect(forgedReason.contains("Invalid JWT Signature"))
        #expect(sandbox.receivedCount == 0)
        try await client.shutdown()
        await sandbox.shutdown()
    }

    @Test func faultsAreClassified() async throws {
        let (sandbox, client) = try await Self.started()
        let account = try TestServiceAccount().account
        try sandbox.admit(account)
        let push = try Self.push(#"{"platform":"android","audience":"all","notification":{"alert":"Hi"}}"#)
        func send(_ token: String) async -> FCMOutcome {
            await client.send(FCMMessage(push: push, msgID: "m", token: token, expiresAt: Date().addingTimeInterval(600)), account: account)
        }
        sandbox.unregister(fcmToken(1))
        #expect(await send(fcmToken(1)) == .tokenDead(reason: "UNREGISTERED"))
        sandbox.bind(fcmToken(2), toProject: "another-project")
        #expect(await send(fcmToken(2)) == .tokenDead(reason: "SENDER_ID_MISMATCH"))
        #expect(await send("not a token") == .tokenDead(reason: "InvalidRegistration"))
        sandbox.inject([.quotaExceeded(retryAfter: "120"), .unavailable(retryAfter: "9"), .internalError, .thirdPartyAuth])
        #expect(await send(fcmToken(3)) == .retryLater(reason: "QUOTA_EXCEEDED", after: .seconds(120)))
        #expect(await send(fcmToken(3)) == .retryLater(reason: "UNAVAILABLE", after: .seconds(9)))
        #expect(await send(fcmToken(3)) == .retryLater(reason: "INTERNAL", after: nil))
        #expect(await send(fcmToken(3)) == .credentialsRefused(reason: "THIRD_PARTY_AUTH_ERROR"))
        #expect(await send(fcmToken(3)) == .delivered(name: "projects/herald-test/messages/1"))
        try await client.shutdown()
        await sandbox.shutdown()
    }

    @Test func anInAppMessageGoesAsData() async throws {
        let (sandbox, client) = try await Self.started()
        let account = try TestServiceAccount().account
        try sandbox.admit(account)
        let push = try Self.push(
            #"{"platform":"android","audience":"all","message":{"msg_content":"body","title":"t","extras":{"k":[1,2]}},"options":{"time_to_live":0}}"#
        )
        let outcome = await client.send(FCMMessage(push: push, msgID: "m9", token: fcmToken(1), expiresAt: Date()), account: account)
        guard case .delivered = outcome else {
            Issue.record("\(outcome)")
            return
        }
        let message = try #require(sandbox.received.first?.message)
        #expect(message["notification"] == nil)
        #expect(message["data"]?["msg_content"]?.string == "body")
        #expect(message["data"]?["extras"]?.string == #"{"k":[1,2]}"#)
        #expect(message["data"]?["msg_id"]?.string == "m9")
        #expect(message["android"]?["ttl"]?.string == "0s")
        #expect(message["android"]?["priority"]?.string == "NORMAL")
        try await client.shutdown()
        await sandbox.shutdown()
    }
}
