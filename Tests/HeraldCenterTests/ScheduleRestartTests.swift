import Foundation
import HeraldCenter
import HeraldCore
import HeraldStore
import HeraldTestSupport
import PostgresNIO
import Testing

/// Schedules due while no scheduler ran, on the wall clock: the scheduler that starts
/// afterwards fires what is at most its grace late and records the rest missed.
@Suite struct ScheduleRestartTests {
    static func push() throws -> PushRequest {
        try JSONDecoder().decode(PushRequest.self, from: Data(#"{"audience": "all", "message": {"msg_content": "late"}}"#.utf8))
    }

    /// Runs a scheduler on `stores` (real clock, `grace`) while `body` runs.
    static func withScheduler(_ stores: TestStores, grace: Duration, _ body: () async throws -> Void) async throws {
        var configuration = CenterConfiguration()
        configuration.schedulePollInterval = .milliseconds(50)
        configuration.scheduleGrace = grace
        let scheduler = Scheduler(configuration: configuration, store: stores.api, changes: nil, logger: TestDatabase.logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await scheduler.run() }
            defer { group.cancelAll() }
            try await body()
        }
    }

    @Test func aScheduleDueWhileNoSchedulerRanFiresWithinGraceOrIsRecordedMissed() async throws {
        try await TestDatabase.withStore { stores in
            let app = try await stores.api.createApp(name: "Restart")
            _ = try await stores.api.devices.register(appKey: app.app.appKey, DeviceRegistration(platform: .linux))
            let utc = TimeZone(identifier: "UTC")!
            let now = Date()
            let first = LocalDateTime(secondsAsUTC: Int64(now.timeIntervalSince1970.rounded(.up)) + 2)
            let second = LocalDateTime(secondsAsUTC: first.secondsAsUTC + 4)
            let early = try await stores.api.schedules.create(
                appID: app.app.id,
                ScheduleDefinition(name: "early", enabled: true, trigger: .single(first), push: try Self.push()),
                cid: nil
            ).schedule
            let later = try await stores.api.schedules.create(
                appID: app.app.id,
                ScheduleDefinition(name: "later", enabled: true, trigger: .single(second), push: try Self.push()),
                cid: nil
            ).schedule

            // A scheduler runs while nothing is due, and stops (the node goes down).
            try await Self.withScheduler(stores, grace: .seconds(3)) {
                try await Task.sleep(for: .milliseconds(300))
            }
            #expect(try await stores.api.schedules.runs(appID: app.app.id, scheduleID: early.scheduleID)?.isEmpty == true)
            // Both come due while none runs: when one starts again, the first is 5.5 s late
            // (beyond the grace of 3 s), the second 1.5 s.
            let back = second.instant(in: utc).addingTimeInterval(1.5)
            try await Task.sleep(for: .seconds(max(0, back.timeIntervalSinceNow)))
            try await Self.withScheduler(stores, grace: .seconds(3)) {
                try await waitUntilAsync("both to be handled") {
                    let runs = try await stores.api.schedules.runs(appID: app.app.id, scheduleID: early.scheduleID) ?? []
                    let laterRuns = try await stores.api.schedules.runs(appID: app.app.id, scheduleID: later.scheduleID) ?? []
                    return runs.count == 1 && laterRuns.count == 1
                }
            }
            let missed = try #require(try await stores.api.schedules.runs(appID: app.app.id, scheduleID: early.scheduleID)?.first)
            #expect(missed.state == .missed && missed.msgID == nil)
            #expect(missed.occurrence == first.instant(in: utc))
            let fired = try #require(try await stores.api.schedules.runs(appID: app.app.id, scheduleID: later.scheduleID)?.first)
            #expect(fired.state == .sent)
            #expect(fired.occurrence == second.instant(in: utc))
            let msgID = try #require(fired.msgID)
            let stored = try await stores.sql.query(
                "SELECT count(*) FROM messages m JOIN push_jobs j ON j.message_id = m.id WHERE m.msg_id = \(msgID)",
                logger: TestDatabase.logger
            )
            for try await count in stored.decode(Int64.self) { #expect(count == 1, "the fired push's message and job") }
            // Both single schedules have finished.
            #expect(try await stores.api.schedules.find(appID: app.app.id, scheduleID: early.scheduleID)?.finished == true)
            #expect(try await stores.api.schedules.find(appID: app.app.id, scheduleID: later.scheduleID)?.finished == true)
        }
    }
}
