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
            for _ in 0..<5 {
                try await attacker.send("GET /v3/tags HTTP/1.1\r\nHost: herald\r\nAuthorization: \(wrong)\r\n\r\n")
                statuses.append(try #require(try await attacker.response()).status)
            }
            #expect(statuses == [401, 401, 401, 401, 429])

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
}
