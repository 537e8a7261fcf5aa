import Crypto
import Foundation
import HeraldAPNsSandbox
import HeraldCore
import Testing

/// `heraldctl apns send` against the APNs sandbox, a real HTTP/2 server playing Apple's
/// sandbox environment: Apple's answer and what it means, for a token that works, a dead
/// one, one of the other environment, one of another app, and a key APNs doesn't know.
struct APNsSendCommandTests {
    static let keyID = "ABC123DEFG"
    static let teamID = "DEF123GHIJ"
    static let topic = "com.example.shop"

    /// Runs `body` with a plaintext sandbox playing the sandbox environment, the test's key
    /// registered with it, and the key's .p8 file written under HOME.
    private func withSandbox(_ body: (APNsSandbox, URL, URL) async throws -> Void) async throws {
        var configuration = APNsSandbox.Configuration(transport: .plaintext)
        configuration.environment = .sandbox
        let sandbox = try await APNsSandbox.start(configuration: configuration)
        do {
            try await CtlTest.withHome { home in
                let key = P256.Signing.PrivateKey()
                sandbox.registerSigningKey(keyID: Self.keyID, teamID: Self.teamID, publicKey: key.publicKey)
                let p8 = home.appendingPathComponent("AuthKey_\(Self.keyID).p8")
                try Data(key.pemRepresentation.utf8).write(to: p8)
                try await body(sandbox, home, p8)
            }
            await sandbox.shutdown()
        } catch {
            await sandbox.shutdown()
            throw error
        }
    }

    private func send(_ sandbox: APNsSandbox, _ home: URL, _ arguments: [String]) async throws -> CLIResult {
        try await CLIRunner.run(
            ["apns", "send", "--server", "127.0.0.1:\(sandbox.port)", "--plaintext", "--topic", Self.topic] + arguments,
            environment: ["HOME": home.path, "PATH": "/usr/bin:/bin"]
        )
    }

    private func tokenAuth(_ p8: URL) -> [String] { ["--p8", p8.path, "--key-id", Self.keyID, "--team-id", Self.teamID] }

    @Test func aGoodTokenIsAcceptedAndTheNotificationArrives() async throws {
        try await withSandbox { sandbox, home, p8 in
            let token = String(repeating: "ab", count: 32)
            sandbox.registerDevice(token, topic: Self.topic, environment: .sandbox)
            let result = try await send(
                sandbox,
                home,
                ["--token", token, "--title", "Hi", "--alert", "from the pusher", "--badge", "2"] + tokenAuth(p8)
            )
            #expect(result.status == 0, "\(result)")
            #expect(result.field("status") == "200")
            let recorded = try #require(sandbox.notifications.last)
            #expect(result.field("apns_id") == recorded.apnsID.uuidString)
            #expect(recorded.topic == Self.topic && recorded.pushType == "alert")
            #expect(String(decoding: recorded.payload, as: UTF8.self) == #"{"aps":{"alert":{"body":"from the pusher","title":"Hi"},"badge":2}}"#)
        }
    }

    @Test func eachRefusalComesWithWhatToCheck() async throws {
        try await withSandbox { sandbox, home, p8 in
            let production = String(repeating: "cd", count: 32)
            sandbox.registerDevice(production, topic: Self.topic, environment: .production)
            let wrongEnvironment = try await send(sandbox, home, ["--token", production, "--alert", "x"] + tokenAuth(p8))
            #expect(wrongEnvironment.status == 1, "\(wrongEnvironment)")
            #expect(wrongEnvironment.field("status") == "400" && wrongEnvironment.field("reason") == "BadDeviceToken")
            #expect(wrongEnvironment.field("advice")?.contains("try production") == true, "\(wrongEnvironment)")

            let dead = String(repeating: "ef", count: 32)
            sandbox.markUnregistered(dead, since: Date(timeIntervalSince1970: 1_760_000_000))
            let unregistered = try await send(sandbox, home, ["--token", dead, "--alert", "x"] + tokenAuth(p8))
            #expect(unregistered.field("status") == "410" && unregistered.field("reason") == "Unregistered", "\(unregistered)")
            #expect(unregistered.field("timestamp") == "2025-10-09T08:53:20Z")
            #expect(unregistered.field("advice")?.contains("uninstalled") == true)

            let otherApp = String(repeating: "12", count: 32)
            sandbox.registerDevice(otherApp, topic: "com.example.other")
            let notForTopic = try await send(sandbox, home, ["--token", otherApp, "--alert", "x"] + tokenAuth(p8))
            #expect(notForTopic.field("reason") == "DeviceTokenNotForTopic", "\(notForTopic)")
            #expect(notForTopic.field("advice")?.contains("bundle id of the app that registered") == true)

            // A key APNs doesn't know (the right file with another key id).
            let unknownKey = try await send(
                sandbox,
                home,
                ["--token", String(repeating: "ab", count: 32), "--alert", "x", "--p8", p8.path, "--key-id", "ZZZ999ZZZZ", "--team-id", Self.teamID]
            )
            #expect(unknownKey.field("status") == "403" && unknownKey.field("reason") == "InvalidProviderToken", "\(unknownKey)")
            #expect(unknownKey.field("advice")?.contains("key id, the team id and the .p8 file") == true)

            // A file that is no key at all: said before anything is sent.
            let broken = home.appendingPathComponent("broken.p8")
            try Data("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n".utf8).write(to: broken)
            let before = sandbox.notifications.count + sandbox.rejections.count
            let unreadable = try await send(
                sandbox,
                home,
                ["--token", production, "--alert", "x", "--p8", broken.path, "--key-id", Self.keyID, "--team-id", Self.teamID]
            )
            #expect(unreadable.status == 64, "\(unreadable)")
            #expect(unreadable.stderr.contains("not a PEM-encoded P-256 private key"), "\(unreadable)")
            #expect(sandbox.notifications.count + sandbox.rejections.count == before)

            let json = try await send(sandbox, home, ["--token", production, "--alert", "x", "--json"] + tokenAuth(p8))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            #expect(object["reason"] as? String == "BadDeviceToken" && object["status"] as? Int == 400)
        }
    }

    /// APNs answering ExpiredProviderToken did answer: a refusal (exit 1) with the advice
    /// about the clock, not "no answer".
    @Test func anExpiredProviderTokenIsApplesAnswerWithTheAdviceAboutTheClock() async throws {
        try await withSandbox { sandbox, home, p8 in
            sandbox.setFaultForEveryRequest(.reject(status: 403, reason: "ExpiredProviderToken"))
            let result = try await send(sandbox, home, ["--token", String(repeating: "ab", count: 32), "--alert", "x"] + tokenAuth(p8))
            #expect(result.status == 1, "\(result)")
            #expect(result.field("status") == "403" && result.field("reason") == "ExpiredProviderToken", "\(result)")
            #expect(result.field("advice")?.contains("clock") == true, "\(result)")
        }
    }

    /// No answer (APNs hangs, or nothing listens) is exit 69, as the help promises, and
    /// names APNs.
    @Test func noAnswerIsUnreachable() async throws {
        try await withSandbox { sandbox, home, p8 in
            sandbox.setFaultForEveryRequest(.neverAnswer)
            let hang = try await send(
                sandbox,
                home,
                ["--token", String(repeating: "ab", count: 32), "--alert", "x", "--timeout", "1"] + tokenAuth(p8)
            )
            #expect(hang.status == 69, "\(hang)")
            #expect(hang.stderr.contains("cannot reach APNs at 127.0.0.1:\(sandbox.port)"), "\(hang)")
        }
    }
}
