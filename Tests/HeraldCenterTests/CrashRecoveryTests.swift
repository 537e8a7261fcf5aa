import Foundation
import HeraldCenter
import HeraldCore
import HeraldTestSupport
import NIOConcurrencyHelpers
import PostgresNIO
import Testing

/// A worker that dies mid-fan-out: another takes the job over when the lease runs out and
/// nothing is lost or stored twice.
@Suite struct CrashRecoveryTests {
    @Test func aWorkerKilledMidFanOutLosesAndDuplicatesNothing() async throws {
        let died = NIOLockedValueBox(false)
        let faults = CenterFaults { _, batch in
            // The first worker dies after its second batch is committed, before routing it.
            if batch == 2,
                died.withLockedValue({ dead in
                    defer { dead = true }
                    return !dead
                })
            {
                throw CenterFaults.WorkerDied()
            }
        }
        let smallBatchesShortLease: @Sendable (inout CenterConfiguration) -> Void = { configuration in
            configuration.batchSize = 10
            configuration.lease = .seconds(2)
        }
        try await CenterTest.run(configure: smallBatchesShortLease, faults: faults) { test in
            var devices: [String] = []
            for _ in 0..<45 { devices.append(try await test.register(platform: "linux", tags: ["all-of-us"]).registrationID) }
            let sent = try await test.push(["audience": ["tag": ["all-of-us"]], "message": ["msg_content": "to everyone"]])
            #expect(sent.status == 200)
            let report = try await test.settledReport(sent.msgID, timeout: .seconds(20))
            #expect(died.withLockedValue { $0 })
            #expect(report["targeted"] as? Int == 45)
            #expect(report["pending"] as? Int == 0)
            #expect(report["waiting"] as? Int == 45)
            let rows = try await test.store.client.query(
                """
                SELECT count(*), count(DISTINCT device_id) FROM device_messages WHERE message_id = \(sent.msgID)
                """,
                logger: TestDatabase.logger
            )
            for try await (copies, distinct) in rows.decode((Int64, Int64).self) {
                #expect(copies == 45)
                #expect(distinct == 45)
            }
        }
    }
}
