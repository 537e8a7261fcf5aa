import CoreMetrics
import Foundation
import HeraldCore
import HeraldGateway
import HeraldStore
import Logging
import NIOCore

/// Runs one claimed job: fans a push out batch by batch (each batch one transaction that
/// stores the copies and moves the cursor, then routed while the next batch is written),
/// or sends a recall's commands. A job taken over from a dead worker first routes the
/// copies its predecessor stored but never routed, then resumes at the cursor: no copy is
/// lost and none is stored twice.
struct PushJobRunner: Sendable {
    let store: CenterStore
    let gateway: Gateway
    let router: DeliveryRouter
    let configuration: CenterConfiguration
    let metrics: CenterMetrics
    let faults: CenterFaults
    let logger: Logger

    /// Batches being routed at once per job.
    private let routingWindow = 8

    /// Runs a recall, or a push job taken over from a dead worker. Returns true when the
    /// job is done, false when it stopped early (shutdown).
    func run(_ job: PushJob, stopping: @escaping @Sendable () -> Bool) async throws -> Bool {
        let held = HeldJobs([job.id])
        do {
            return try await whileLeased(held, stopping: stopping) {
                switch job.kind {
                case .push: try await fanOut(job, held, stopping: stopping)
                case .recall: try await sendRecalls(job, held, stopping: stopping)
                }
            }
        } catch is LeaseLost {
            return false
        }
    }

    /// Returns true when the job is done, false when it stopped early (shutdown).
    private func fanOut(_ job: PushJob, _ held: HeldJobs, stopping: @escaping @Sendable () -> Bool) async throws -> Bool {
        guard let message = try await store.message(id: job.messageID) else {
            try await store.finishJob(job)
            return true
        }
        let prepared = router.prepare(message)
        if job.attempt > 1 {
            metrics.jobsTakenOver.increment()
            var cursor: Int64 = 0
            while true {
                let targets = try await store.unroutedTargets(messageID: message.id, after: cursor, limit: configuration.batchSize)
                guard let last = targets.last?.deviceID else { break }
                if message.isLive { try await router.route(prepared, targets: targets) }
                held.advanced()
                cursor = last
            }
        }
        if message.push.path.isSpread { return try await fanOutSpread(job, prepared, held, stopping: stopping) }
        guard try await fanOutRest(job, prepared, batches: 0, held: held, stopping: stopping) else { return false }
        try await store.finishJob(job)
        return true
    }

    /// Fans a job out from its cursor to the end of its audience, batch by batch, each
    /// batch routed while the next is written. False when it stopped early (shutdown).
    func fanOutRest(
        _ job: PushJob,
        _ prepared: DeliveryRouter.Prepared,
        batches: Int,
        held: HeldJobs,
        stopping: @escaping @Sendable () -> Bool
    ) async throws -> Bool {
        let message = prepared.message
        let payload = prepared.storedPayload
        return try await withThrowingTaskGroup(of: Void.self) { group -> Bool in
            var routing = 0
            var batches = batches
            while true {
                if stopping() { return false }
                guard
                    let targets = try await store.fanOutBatch(
                        job: job,
                        message: message,
                        payload: payload,
                        limit: configuration.batchSize,
                        node: configuration.nodeID,
                        lease: configuration.lease
                    ), !targets.isEmpty
                else { break }
                held.advanced()
                batches += 1
                metrics.fannedOut.increment(by: targets.count)
                try await faults.afterBatch(message.msgID, batches)
                if routing >= routingWindow {
                    try await group.next()
                    held.advanced()
                    routing -= 1
                }
                group.addTask { try await router.route(prepared, targets: targets) }
                routing += 1
            }
            try await group.waitForAll()
            return true
        }
    }

    private func sendRecalls(_ job: PushJob, _ held: HeldJobs, stopping: @escaping @Sendable () -> Bool) async throws -> Bool {
        guard let message = try await store.message(id: job.messageID) else {
            try await store.finishJob(job)
            return true
        }
        let window = configuration.recallWindow.timeInterval
        let remaining = max(1, message.createdAt.addingTimeInterval(window).timeIntervalSinceNow)
        var cursor = job.cursor
        while true {
            if stopping() { return false }
            let targets = try await store.recallTargets(messageID: message.id, after: cursor, limit: configuration.batchSize, window: window)
            guard let last = targets.last?.target.deviceID else { break }
            // Over the MQTT connection: stored in each inbox, so an offline device gets it
            // on its next connection; sent now to those connected.
            let commandID = try await store.newMsgID()
            let command = GatewayMessage(
                msgID: commandID,
                payload: .init(bytes: PushRendering.deviceRecall(commandID: commandID, identifiers: [message.identifier])),
                timeToLive: .seconds(Int64(remaining))
            )
            let devices = targets.map { DeviceIdentity(deviceID: $0.target.deviceID, appID: message.appID, registrationID: $0.target.registrationID) }
            let outcomes = try await gateway.deliver(command, to: devices, ackTimeout: configuration.ackTimeout)
            metrics.recallCommands.increment(by: targets.count)
            var overChannels: [RecallTarget] = []
            for (target, outcome) in zip(targets, outcomes) {
                if outcome == .acknowledged {
                    try await store.recallsConfirmed(deviceID: target.target.deviceID, identifiers: [message.identifier])
                } else {
                    overChannels.append(target)  // devices without an MQTT connection: their channel (APNs, FCM)
                }
            }
            // Devices connected to another node load the command from their inboxes now.
            try await router.inboxesChanged(overChannels.map(\.target))
            await router.sendRecalls(overChannels, appID: message.appID, push: message.push)
            try await store.advanceJob(job, cursor: last, lease: configuration.lease)
            held.advanced()
            cursor = last
        }
        try await store.finishJob(job)
        return true
    }
}

/// Faults a test injects to show what survives them.
public struct CenterFaults: Sendable {
    /// Called after each fan-out batch is committed (msg id, batch number); throwing
    /// ``CenterFaults/WorkerDied`` abandons the job as a killed worker would, lease held.
    public var afterBatch: @Sendable (String, Int) async throws -> Void

    public struct WorkerDied: Error {
        public init() {}
    }

    public init(afterBatch: @escaping @Sendable (String, Int) async throws -> Void = { _, _ in }) {
        self.afterBatch = afterBatch
    }
}
