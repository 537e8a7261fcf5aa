import Foundation
import HeraldCenter
import HeraldCore
import HeraldNode
import HeraldNodeTesting
import HeraldTestSupport
import PostgresNIO
import Testing

/// JPush's `big_push_duration`: a push's audience fanned out evenly over that many minutes
/// (a "minute" made 8 s long by configuration: long enough that a loaded machine's stall
/// of a second or two doesn't use it up), parked between batches; a recall stops what has
/// not gone out.
@Suite struct SpreadPushTests {
    private static func configure(_ configuration: inout HeraldNodeConfiguration) {
        configuration.center.spreadMinute = .seconds(8)
        configuration.center.pollInterval = .milliseconds(100)
    }

    /// `count` Linux devices of the test's app, written straight into the table.
    private func devices(_ test: TestNode, count: Int) async throws {
        try await test.stores.sql.query(
            """
            INSERT INTO devices (app_id, registration_id, platform, secret_hash)
            SELECT \(test.appID), lpad(to_hex(n), 20, '0'), 'linux', '\\x00'::bytea FROM generate_series(1, \(count)) AS n
            """,
            logger: TestDatabase.logger
        )
    }

    /// Seconds after the message was made at which each of its copies was routed.
    private func routedAfter(_ test: TestNode, _ msgID: String) async throws -> [Double] {
        let rows = try await test.stores.sql.query(
            """
            SELECT extract(epoch FROM dl.routed_at - m.created_at)::float8
            FROM deliveries dl JOIN messages m ON m.id = dl.message_id WHERE m.msg_id = \(msgID) AND dl.routed_at IS NOT NULL
            """,
            logger: TestDatabase.logger
        )
        var seconds: [Double] = []
        for try await value in rows.decode(Double.self) { seconds.append(value) }
        return seconds.sorted()
    }

    @Test func aPushToAThousandDevicesOverAMinuteGoesOutEvenly() async throws {
        try await TestNode.run(configure: Self.configure) { test in
            try await devices(test, count: 1000)
            let sent = try await test.push(["audience": "all", "message": ["msg_content": "x"], "options": ["big_push_duration": 1]])
            #expect(sent.status == 200, "\(sent.json)")
            #expect(sent.json["warnings"].isNull, "big_push_duration is applied, not warned about: \(sent.json)")
            // Midway, the report shows how far it is.
            try await Task.sleep(for: .seconds(4))
            let midway = try await test.call("GET", "/v3/report/received?msg_ids=\(sent.msgID)").json["reports"][0]
            #expect(midway["spread"]["minutes"].int == 1 && midway["spread"]["audience"].int == 1000, "\(midway)")
            #expect(midway["spread"]["next_batch_at"].string != nil, "\(midway)")
            #expect((200...800).contains(midway["targeted"].int ?? 0), "\(midway)")
            // Done once the job is gone.
            let deadline = ContinuousClock.now + .seconds(30)
            while try await test.count("push_jobs") > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(200)) }
            let times = try await routedAfter(test, sent.msgID)
            #expect(times.count == 1000)
            // Evenly over the 8 s: a quarter in each 2 s, give or take a few batches and a
            // busy machine; certainly not all at once.
            for quarter in 0..<4 {
                let inQuarter = times.filter { $0 >= Double(2 * quarter) && $0 < Double(2 * quarter + 2) }.count
                #expect(
                    (120...380).contains(inQuarter),
                    "seconds \(2 * quarter) to \(2 * quarter + 2): \(inQuarter) copies; first \(times.first ?? -1) last \(times.last ?? -1)"
                )
            }
            #expect((times.last ?? 0) >= 7, "the last copy at \(times.last ?? 0) s")
            let report = try await test.call("GET", "/v3/report/received?msg_ids=\(sent.msgID)").json["reports"][0]
            #expect(report["targeted"].int == 1000 && report["spread"]["audience"].int == 1000, "\(report)")
            #expect(report["spread"]["next_batch_at"].isNull, "\(report)")
        }
    }

    @Test func aRecallStopsWhatHasNotGoneOutYet() async throws {
        try await TestNode.run(configure: Self.configure) { test in
            try await devices(test, count: 1000)
            let sent = try await test.push(["audience": "all", "message": ["msg_content": "x"], "options": ["big_push_duration": 1]])
            // Recalled once the first batches are out.
            try await waitUntilAsync("the first copies") { try await test.count("deliveries") > 0 }
            try await Task.sleep(for: .seconds(1))
            let recalled = try await test.call("DELETE", "/v3/push/\(sent.msgID)")
            #expect(recalled.status == 200, "\(recalled.json)")
            let atRecall = try await test.count("deliveries")
            try await Task.sleep(for: .seconds(9))
            let after = try await test.count("deliveries")
            // At most the batch in flight when the recall came, and nothing after.
            #expect(after < 700, "\(atRecall) copies at the recall, \(after) after")
            #expect(after - atRecall <= 60, "\(atRecall) copies at the recall, \(after) after")
            #expect(try await test.count("push_jobs WHERE kind = 'push'") == 0)
        }
    }
}
