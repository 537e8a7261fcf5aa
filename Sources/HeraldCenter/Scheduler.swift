import Foundation
import HeraldCore
import HeraldStore
import Logging
import ServiceLifecycle

/// Fires schedules: every node runs one, on the same database.
///
/// It claims the schedule due earliest (`FOR UPDATE SKIP LOCKED`) and, in that claim's
/// transaction, accepts the push of each occurrence due, records the occurrence and moves
/// the schedule on (``APIStore/fireDueSchedule(now:grace:)``); then the next, until none is
/// due. Then it sleeps until the next schedule is due, at most
/// ``CenterConfiguration/schedulePollInterval``, or until a schedule changes (a NOTIFY
/// from the API; without it, the poll finds the change). Several nodes never fire one
/// occurrence twice, and a schedule due while every node was down is handled when one
/// comes back (``CenterConfiguration/scheduleGrace`` says whether it fires or is missed).
public final class Scheduler: Service, Sendable {
    private let configuration: CenterConfiguration
    private let store: APIStore
    private let changes: AsyncStream<DatabaseListener.Event>?
    private let alarm = Alarm()
    private let logger: Logger

    /// - Parameters:
    ///   - store: the durable store the API accepts pushes through.
    ///   - changes: the schedules channel's notifications (``DatabaseListener``), or nil to
    ///     find changes by polling only.
    public init(configuration: CenterConfiguration, store: APIStore, changes: AsyncStream<DatabaseListener.Event>?, logger: Logger) {
        self.configuration = configuration
        self.store = store
        self.changes = changes
        self.logger = logger
    }

    public func run() async throws {
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.listen() }
                await self.fire()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            self.alarm.stop()
        }
    }

    /// Fires what is due, then waits for the next due time, a poll or a wake-up.
    private func fire() async {
        while !Task.isCancelled, !alarm.isStopped {
            var wait = configuration.schedulePollInterval
            do {
                while let fired = try await store.fireDueSchedule(now: configuration.scheduleClock(), grace: configuration.scheduleGrace.timeInterval)
                {
                    log(fired)
                    if Task.isCancelled { return }
                }
                if let next = try await store.nextScheduleDue() {
                    let until = next.timeIntervalSince(configuration.scheduleClock())
                    wait = min(wait, .milliseconds(Int64(max(0, until) * 1000)))
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("Could not fire schedules; trying again", metadata: ["error": "\(error)"])
            }
            await alarm.sleep(for: wait)
        }
    }

    private func log(_ fired: [FiredRun]) {
        for run in fired {
            logger.info(
                "schedule occurrence handled",
                metadata: [
                    "herald.schedule_id": "\(run.scheduleID)", "herald.schedule.state": "\(run.state.rawValue)",
                    "herald.msg_id": "\(run.msgID ?? "")", "herald.schedule.time_zone": "\(run.timeZone ?? "")",
                ]
            )
        }
    }

    /// Wakes the loop on each changed schedule, and whenever the channel is listened to
    /// (again): a change made meanwhile is not missed.
    private func listen() async {
        guard let changes else { return }
        for await _ in changes { alarm.ring() }
    }
}
