import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Prometheus
import Testing

/// Guessing a master secret over real sockets: refused with 429 after a few failures,
/// while the app's owner, from another address, still gets in.
struct AuthThrottleAPITests {
    @Test func wrongSecretsAreRefusedWith429AfterTheBudgetWhileTheRightOneWorksFromAnotherAddress() async throws {
        try await APITest.live { configuration, _ in
            configuration.authFailures = .init(perKeyAndAddress: 5, perAddress: 50, perKey: 1000, window: .seconds(600))
        } _: { api, _ in
            let created = try await api.createApp()
            let port = try #require(api.client.port)
            let wrong = Auth.basic(created.appKey, "not-the-secret").header
            let right = created.auth.header

            let attacker = try await RawHTTPConnection.connect(port: port)
            var statuses: [Int] = []
            for index in 0..<5 {
                let wrong = Auth.basic(created.appKey, "guess-\(index)").header
                try await attacker.send("GET /v3/tags HTTP/1.1\r\nHost: herald\r\nAuthorization: \(wrong)\r\n\r\n")
                statuses.append(try #require(try await attacker.response()).status)
            }
            // The failure that spends the budget is answered 401; the next attempt is refused.
            #expect(statuses == [401, 401, 401, 401, 401])

            try await attacker.send("GET /v3/tags HTTP/1.1\r\nHost: herald\r\nAuthorization: \(wrong)\r\n\r\n")
            let refused = try #require(try await attacker.response())
            #expect(refused.status == 429)
            #expect(refused.errorCode == HeraldError.Code.tooManyRequests.rawValue, "\(refused)")
            let retryAfter = try #require(refused.header("Retry-After").flatMap(Int.init))
            #expect(retryAfter > 0 && retryAfter <= 600)
            await attacker.close()

            let owner = try await RawHTTPConnection.connect(port: port, from: "127.0.0.2")
            try await owner.send("GET /v3/tags HTTP/1.1\r\nHost: herald\r\nAuthorization: \(right)\r\n\r\n")
            let answer = try #require(try await owner.response())
            #expect(answer.status == 200, "\(answer)")
            await owner.close()
        }
    }

    /// One client behind a shared address keeps sending a stale secret: it is answered 401
    /// each time, and the right secret from that address still works.
    @Test func aStaleSecretSentAgainAndAgainDoesNotLockItsAddress() async throws {
        try await APITest.live { configuration, _ in
            configuration.authFailures = .init(perKeyAndAddress: 5, perAddress: 50, perKey: 1000, window: .seconds(600))
        } _: { api, _ in
            let created = try await api.createApp()
            let port = try #require(api.client.port)
            let stale = Auth.basic(created.appKey, "the-old-secret").header
            let worker = try await RawHTTPConnection.connect(port: port)
            var statuses: [Int] = []
            for _ in 0..<20 {
                try await worker.send("GET /v3/tags HTTP/1.1\r\nHost: herald\r\nAuthorization: \(stale)\r\n\r\n")
                statuses.append(try #require(try await worker.response()).status)
            }
            #expect(statuses == Array(repeating: 401, count: 20))
            await worker.close()

            let neighbour = try await RawHTTPConnection.connect(port: port)
            try await neighbour.send("GET /v3/tags HTTP/1.1\r\nHost: herald\r\nAuthorization: \(created.auth.header)\r\n\r\n")
            let answer = try #require(try await neighbour.response())
            #expect(answer.status == 200, "\(answer)")
            await neighbour.close()
        }
    }

    /// Secrets guessed from an address lock it for guesses, not for the clients there that
    /// authenticated with the right secret: only the guesses are refused.
    @Test func theRightSecretKeepsWorkingFromAnAddressRefusedForGuesses() async throws {
        try await APITest.live { configuration, _ in
            configuration.authFailures = .init(perKeyAndAddress: 5, perAddress: 50, perKey: 1000, window: .seconds(600))
        } _: { api, _ in
            let created = try await api.createApp()
            let port = try #require(api.client.port)
            let right = created.auth.header
            let fleet = try await RawHTTPConnection.connect(port: port)
            try await fleet.send("GET /v3/tags HTTP/1.1\r\nHost: herald\r\nAuthorization: \(right)\r\n\r\n")
            #expect(try #require(try await fleet.response()).status == 200)

            let guesser = try await RawHTTPConnection.connect(port: port)
            var statuses: [Int] = []
            for index in 0..<7 {
                let guess = Auth.basic(created.appKey, "guess-\(index)").header
                try await guesser.send("GET /v3/tags HTTP/1.1\r\nHost: herald\r\nAuthorization: \(guess)\r\n\r\n")
                statuses.append(try #require(try await guesser.response()).status)
            }
            #expect(statuses == [401, 401, 401, 401, 401, 429, 429])
            await guesser.close()

            for _ in 0..<3 {
                try await fleet.send("GET /v3/tags HTTP/1.1\r\nHost: herald\r\nAuthorization: \(right)\r\n\r\n")
                let answer = try #require(try await fleet.response())
                #expect(answer.status == 200, "\(answer)")
            }
            await fleet.close()
        }
    }
}
