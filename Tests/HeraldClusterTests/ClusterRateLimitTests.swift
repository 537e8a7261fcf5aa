import Foundation
import HeraldCore
import HeraldNodeTesting
import HeraldTestSupport
import Testing

/// An app's rate limit is one bucket for the whole cluster: requests spread over every
/// node together get what the limit allows, not that much per node.
struct ClusterRateLimitTests {
    @Test func pushesSpreadOverThreeNodesShareOneLimit() async throws {
        // The nodes' default limit (an app without its own): 30 a minute, refilling one
        // token every 2 s.
        try await TestCluster.with(nodes: 3, environment: ["HERALD_API_RATE_LIMIT_PER_MINUTE": "30"]) { cluster in
            _ = try await cluster.register(on: cluster.nodes[0])
            let body: JSON = ["platform": "all", "audience": "all", "message": ["msg_content": "x"]]
            let started = ContinuousClock.now
            let answers = try await withThrowingTaskGroup(of: TestCluster.Answer.self) { group in
                for index in 0..<90 {
                    group.addTask { try await cluster.exchange(cluster.nodes[index % 3], "POST", "/v3/push", body) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let elapsed = started.duration(to: .now)
            let accepted = answers.filter { $0.status == 200 }
            let refused = answers.filter { $0.status == 429 }
            #expect(accepted.count + refused.count == 90, "\(answers.map(\.status))")
            // The whole bucket, plus what refilled while the requests ran, and no more.
            let refilled = Int((Double(elapsed.components.seconds) + 1) / 2) + 1
            #expect(accepted.count >= 30 && accepted.count <= 30 + refilled, "\(accepted.count) accepted in \(elapsed)")
            for answer in refused {
                #expect(answer.json["error"]["code"].int == HeraldError.Code.tooManyRequests.rawValue)
                #expect(answer.headers["x-rate-limit-limit"] == "30")
                #expect(answer.headers["retry-after"].flatMap(Int.init).map { (1...2).contains($0) } == true, "\(answer.headers)")
            }
            for answer in accepted { #expect(answer.headers["x-rate-limit-limit"] == "30") }
            // Each accepted push is a message, and nothing else is.
            let stored = try await cluster.sql.query("SELECT count(*)::int FROM messages", logger: TestDatabase.logger)
            for try await count in stored.decode(Int.self) { #expect(count == accepted.count) }
        }
    }
}
