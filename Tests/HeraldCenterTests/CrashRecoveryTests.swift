import Foundation
import HeraldCenter
import HeraldCore
import HeraldNode
import HeraldNodeTesting
import HeraldTestSupport
import NIOConcurrencyHelpers
import PostgresNIO
import Testing

/// A worker that dies mid-fan-out: another takes the job over when the lease runs out and
/// nothing is lost or stored twice.
@Suite struct CrashRecoveryTests {
    @Test func aWorkerKilledMidFanOutLosesAndDuplicatesNothing() async throws {
        // The first worker dies after its second batch is committed, before routing it.
        let (faults, died) = Self.dyingOnce(afterBatch: 2)
        let smallBatchesShortLease: @Sendable (inout HeraldNodeConfiguration) -> Void = { configuration in
            configuration.center.batchSize = 10
            configuration.center.lease = .seconds(2)
        }
        try await TestNode.run(configure: smallBatchesShortLease, faults: faults) { test in
            var devices: [String] = []
            for _ in 0..<45 { devices.append(try await test.register(platform: "linux", tags: ["all-of-us"]).registrationID) }
            let sent = try await test.push(["audience": ["tag": ["all-of-us"]], "message": ["msg_content": "to everyone"]])
            #expect(sent.status == 200)
            let report = try await test.settledReport(sent.msgID, timeout: .seconds(20))
            #expect(died.withLockedValue { $0 })
            #expect(report["targeted"].int == 45)
            #expect(report["pending"].int == 0)
            #expect(report["waiting"].int == 45)
            let rows = try await test.stores.sql.query(
                """
                SELECT count(*), count(DISTINCT device_id) FROM device_messages WHERE msg_id = \(sent.msgID)
                """,
                logger: TestDatabase.logger
            )
            for try await (copies, distinct) in rows.decode((Int64, Int64).self) {
                #expect(copies == 45)
                #expect(distinct == 45)
            }
        }
    }

    /// A worker whose statement never returns (a PostgreSQL restart left the connection
    /// under it dead) stops renewing its job's lease once its work has stood still for four
    /// leases: the job is given back and fanned out to the rest of its audience, instead
    /// of being held, its lease renewed, for as long as the statement waits.
    @Test func aJobWhoseWorkHangsIsGivenBackAndReachesItsWholeAudience() async throws {
        let (faults, hung) = Self.once(afterBatch: 2) { try await Task.sleep(for: .seconds(3600)) }
        let smallBatchesShortLease: @Sendable (inout HeraldNodeConfiguration) -> Void = { configuration in
            configuration.center.batchSize = 10
            configuration.center.lease = .seconds(1)
        }
        try await TestNode.run(configure: smallBatchesShortLease, faults: faults) { test in
            for _ in 0..<45 { _ = try await test.register(platform: "linux", tags: ["all-of-us"]) }
            let sent = try await test.push(["audience": ["tag": ["all-of-us"]], "message": ["msg_content": "to everyone"]])
            #expect(sent.status == 200)
            let report = try await test.settledReport(sent.msgID, timeout: .seconds(30))
            #expect(hung.withLockedValue { $0 })
            #expect(report["targeted"].int == 45)
            #expect(report["pending"].int == 0)
            #expect(report["waiting"].int == 45)
        }
    }

    /// A push to explicit devices is fanned out in the statement that accepts it and handed
    /// straight to this process's center. When that center is gone before routing it (the
    /// process died after the commit), the job's lease runs out and a worker takes it over:
    /// the device gets the message once, from the copy stored at acceptance.
    @Test func aPushFannedOutAtAcceptanceWhoseCenterDiedIsDeliveredOnceByATakeOver() async throws {
        let (faults, died) = Self.dyingOnce(afterBatch: 1)
        let shortLease: @Sendable (inout HeraldNodeConfiguration) -> Void = { $0.center.lease = .seconds(2) }
        try await TestNode.run(configure: shortLease, faults: faults) { test in
            let device = try await test.register(platform: "linux", alias: "bob")
            try await test.online(device) { reader in
                let sent = try await test.push(["audience": ["alias": ["bob"]], "message": ["msg_content": "once"]])
                #expect(sent.status == 200)
                // Stored with the push, leased to this node on its first attempt: the
                // fast path, not the queue.
                let job = try await test.stores.sql.query(
                    """
                    SELECT j.leased_by, j.attempts, dl.inbox_seq IS NOT NULL FROM push_jobs j
                    JOIN messages m ON m.id = j.message_id JOIN deliveries dl ON dl.message_id = m.id
                    WHERE m.msg_id = \(sent.msgID)
                    """,
                    logger: TestDatabase.logger
                )
                var rows = 0
                for try await (leasedBy, attempts, inboxed) in job.decode((String?, Int32, Bool).self) {
                    rows += 1
                    #expect(leasedBy == "test-node")
                    #expect(attempts == 1)
                    #expect(inboxed)
                }
                #expect(rows == 1)
                let event = try await reader.next(where: \.isMessage, timeout: .seconds(15))
                #expect(event?.message?.content == "once")
                let report = try await test.settledReport(sent.msgID, timeout: .seconds(15))
                #expect(report["tcp_delivered"].int == 1)
                #expect(report["pending"].int == 0)
                #expect(try await reader.next(where: \.isMessage, timeout: .milliseconds(500)) == nil)
            }
            #expect(died.withLockedValue { $0 })
            let attempts = try await test.stores.sql.query("SELECT count(*) FROM push_jobs", logger: TestDatabase.logger)
            for try await left in attempts.decode(Int64.self) { #expect(left == 0) }
        }
    }

    /// Faults under which the first worker to commit batch `batch` of a fan-out dies there,
    /// before routing it; and whether it did.
    private static func dyingOnce(afterBatch batch: Int) -> (CenterFaults, NIOLockedValueBox<Bool>) {
        once(afterBatch: batch) { throw CenterFaults.WorkerDied() }
    }

    /// Faults under which the first worker to commit batch `batch` of a fan-out does
    /// `fault` there; and whether one did.
    private static func once(
        afterBatch batch: Int,
        _ fault: @escaping @Sendable () async throws -> Void
    ) -> (CenterFaults, NIOLockedValueBox<Bool>) {
        let happened = NIOLockedValueBox(false)
        let faults = CenterFaults { _, committed in
            let now =
                committed == batch
                && happened.withLockedValue { happened in
                    defer { happened = true }
                    return !happened
                }
            if now { try await fault() }
        }
        return (faults, happened)
    }
}
