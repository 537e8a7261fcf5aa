import CoreMetrics
import Foundation
import HeraldCore
import HeraldGateway
import HeraldRouting
import HeraldStore
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// The message center: takes accepted pushes from the PostgreSQL queue and delivers every
/// copy over the channel that reaches its device.
///
/// Workers claim jobs with `FOR UPDATE SKIP LOCKED` and a lease, woken by `LISTEN/NOTIFY`
/// (and a slow poll, for anything a NOTIFY missed). Several nodes can run centers on one
/// database: a job is worked on by one of them at a time, and a job whose worker died is
/// taken over when its lease runs out. Retries over the channels (APNs, FCM) come due from
/// the deliveries table.
///
/// Graceful shutdown: workers stop between batches and give their jobs back; nothing
/// committed is lost.
public final class MessageCenter: Service, Sendable {
    private let configuration: CenterConfiguration
    private let store: CenterStore
    private let events: DeviceEvents
    private let runner: PushJobRunner
    private let router: DeliveryRouter
    private let cluster: (any ClusterView)?
    private let nodeRoutes: NodeRouteWorker?
    /// The jobs channel's notifications (``DatabaseListener``): each wakes the workers.
    private let jobNotices: AsyncStream<DatabaseListener.Event>
    /// Webhook and callback delivery, when the node has the event log's store.
    private let wake = WakeSignal()
    /// Pushes this process's API fanned out when it accepted them (``receive(_:)``).
    private let accepted = AsyncStream.makeStream(of: [FannedOutPush].self)
    private let stopping = NIOLockedValueBox(false)
    private let metrics: CenterMetrics
    private let logger: Logger

    public init(
        configuration: CenterConfiguration,
        store: CenterStore,
        gateway: Gateway,
        events: DeviceEvents,
        faults: CenterFaults = CenterFaults(),
        cluster: (any ClusterView)? = nil,
        channels: [any DeliveryChannel] = [],
        jobNotices: AsyncStream<DatabaseListener.Event>,
        logger: Logger
    ) {
        self.jobNotices = jobNotices
        self.configuration = configuration
        self.cluster = cluster
        self.store = store
        self.events = events
        self.logger = logger
        let metrics = CenterMetrics()
        self.metrics = metrics
        let router = DeliveryRouter(
            store: store,
            gateway: gateway,
            configuration: configuration,
            metrics: metrics,
            cluster: cluster,
            channels: channels,
            logger: logger
        )
        self.router = router
        self.nodeRoutes = cluster.map { NodeRouteWorker(store: store, router: router, node: $0.node, logger: logger) }
        self.runner = PushJobRunner(
            store: store,
            gateway: gateway,
            router: router,
            configuration: configuration,
            metrics: metrics,
            faults: faults,
            logger: logger
        )
    }

    public func run() async throws {
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.events.record(in: self.store, logger: self.logger) }
                group.addTask { await self.listen() }
                group.addTask { await self.tick() }
                group.addTask { await self.retryDue() }
                group.addTask { await self.releaseHeld() }
                await withDiscardingTaskGroup { workers in
                    workers.addTask { await self.routeAccepted() }
                    if let nodeRoutes, let cluster {
                        let wakeUps = cluster.routeWakeUps.subscribe()
                        let stopping = self.stopping
                        workers.addTask { await nodeRoutes.run(wakeUps: wakeUps) { stopping.withLockedValue { $0 } } }
                    }
                    for index in 0..<max(1, configuration.workers) {
                        let wakeUps = wake.subscribe()
                        workers.addTask { await self.work(index: index, wakeUps: wakeUps) }
                    }
                }
                events.finish()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            self.stopping.withLockedValue { $0 = true }
            self.wake.finish()
            self.cluster?.routeWakeUps.finish()
            self.accepted.continuation.finish()
        }
    }

    private var isStopping: Bool { stopping.withLockedValue { $0 } || Task.isCancelled }

    /// One worker: claims jobs in batches and runs them (``PushJobRunner/run(claimed:logger:stopping:)``)
    /// until none is available, then waits for a wake-up.
    private func work(index: Int, wakeUps: AsyncStream<Void>) async {
        var logger = logger
        logger[metadataKey: "herald.worker"] = "\(index)"
        repeat {
            while !isStopping {
                let jobs: [PushJob]
                do {
                    jobs = try await store.claimJobs(node: configuration.nodeID, lease: configuration.lease, limit: configuration.claimBatch)
                } catch {
                    if !isStopping { logger.warning("Could not claim jobs", metadata: ["error": "\(error)"]) }
                    break
                }
                guard !jobs.isEmpty else { break }
                metrics.jobsClaimed.increment(by: jobs.count)
                await runner.run(claimed: jobs, logger: logger) { [stopping] in stopping.withLockedValue { $0 } }
            }
        } while await wakeUps.first(where: { _ in true }) != nil && !isStopping
    }

    /// Routes the pushes fanned out at acceptance as they come, each commit's together,
    /// until shutdown (those handed over by then are routed first).
    private func routeAccepted() async {
        await withDiscardingTaskGroup { group in
            for await pushes in accepted.stream {
                group.addTask {
                    do {
                        try await self.runner.runFannedOut(pushes) { [stopping = self.stopping] in stopping.withLockedValue { $0 } }
                    } catch is CenterFaults.WorkerDied {
                        self.logger.warning("Worker died (injected); its jobs wait for their leases to run out")
                    } catch {
                        self.logger.error("Jobs failed; retrying shortly", metadata: ["error": "\(error)", "herald.jobs": "\(pushes.count)"])
                        for push in pushes { try? await self.store.releaseJob(push.job, delay: .seconds(1)) }
                    }
                }
            }
        }
    }

    /// Wakes the workers on every NOTIFY of a committed job, and whenever the jobs
    /// channel is listened to (again): a job committed meanwhile is not missed.
    private func listen() async {
        for await _ in jobNotices { wake.signal() }
    }

    private func tick() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: configuration.pollInterval)
            // Keeps the sets of apps that record events fresh for the router (``EventApps``).
            _ = await store.eventApps.snapshot()
            wake.signal()
            cluster?.routeWakeUps.signal()
        }
    }

    /// Every poll interval, releases the copies held by their app's quiet hours whose
    /// window has ended: into their devices' inboxes, then routed as any batch. Every node
    /// does it; they share the work copy by copy.
    private func releaseHeld() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: configuration.pollInterval)
            if isStopping { return }
            do {
                for id in try await store.heldCopiesDue(limit: 16) {
                    guard let message = try await store.message(id: id) else { continue }
                    let prepared = router.prepare(message)
                    while !isStopping {
                        let targets = try await store.releaseHeld(message: message, payload: prepared.storedPayload, limit: configuration.batchSize)
                        if targets.isEmpty { break }
                        metrics.fannedOut.increment(by: targets.filter { !$0.isWithheld }.count)
                        try await router.route(prepared, targets: targets)
                    }
                }
            } catch {
                if !isStopping { logger.warning("Could not release held copies", metadata: ["error": "\(error)"]) }
            }
        }
    }

    /// Sends the channels' retries as they come due. A claimed batch is sent while the next is
    /// claimed (up to ``retryBatchesInFlight`` at once), and the messages of a batch are
    /// sent side by side: a copy whose request its service never answers holds only itself (each
    /// answer is recorded as it comes), not the retries due after it, of any app.
    private func retryDue() async {
        await withTaskGroup(of: Void.self) { group in
            var inFlight = 0
            while !Task.isCancelled {
                if inFlight >= Self.retryBatchesInFlight {
                    await group.next()
                    inFlight -= 1
                    continue
                }
                let due: [DueRetry]
                do {
                    due = try await store.claimDueRetries(limit: configuration.batchSize, lease: .seconds(60))
                } catch {
                    if Task.isCancelled { break }
                    logger.warning("Retries failed; trying again", metadata: ["error": "\(error)"])
                    due = []
                }
                guard due.isEmpty else {
                    inFlight += 1
                    group.addTask { await self.retry(due) }
                    continue
                }
                try? await Task.sleep(for: configuration.pollInterval)
            }
        }
    }

    /// Claimed batches of retries sent at once.
    static let retryBatchesInFlight = 8

    /// Messages of a claimed batch sent at once.
    static let retryMessagesInFlight = 16

    /// Sends a claimed batch of retries, each message's copies beside the others' (up to
    /// ``retryMessagesInFlight`` messages at once: each costs the pool a read and a write).
    private func retry(_ due: [DueRetry]) async {
        await withTaskGroup(of: Void.self) { group in
            var inFlight = 0
            for (messageID, retries) in Dictionary(grouping: due, by: \.messageID) {
                if inFlight >= Self.retryMessagesInFlight {
                    await group.next()
                    inFlight -= 1
                }
                inFlight += 1
                group.addTask {
                    do {
                        try await self.retry(messageID: messageID, retries)
                    } catch {
                        if !Task.isCancelled { self.logger.warning("Retries failed; trying again", metadata: ["error": "\(error)"]) }
                    }
                }
            }
        }
    }

    /// Sends one message's due retries, and records what could not be recorded as it came.
    private func retry(messageID: Int64, _ retries: [DueRetry]) async throws {
        guard let message = try await store.message(id: messageID) else { return }
        let prepared = router.prepare(message)
        var updates: [DeliveryUpdate] = []
        if message.expiresAt <= Date() || !message.isLive {
            updates = retries.map { DeliveryUpdate(deviceID: $0.target.deviceID, state: .expired, event: prepared.event()) }
        } else {
            // Planned again with the device as it is now: a token that died meanwhile (another
            // copy's answer, a new registration) gets no retry; the copy waits in the inbox.
            var routed: [Int: [DeliveryRouter.Routed]] = [:]
            for retry in retries {
                let route = RoutePlanner.fallback(prepared.facts, retry.target.facts, acknowledged: false)
                if route.channel != nil {
                    routed[retry.attempts, default: []].append((retry.target, route))
                } else {
                    updates.append(DeliveryUpdate(deviceID: retry.target.deviceID, state: route == .expire ? .expired : .waiting))
                }
            }
            updates += await withTaskGroup(of: [DeliveryUpdate].self) { group in
                for (attempts, copies) in routed {
                    group.addTask { await self.router.send(prepared, routed: copies, attempts: attempts) }
                }
                var updates: [DeliveryUpdate] = []
                for await some in group { updates += some }
                return updates
            }
        }
        try await store.recordDeliveries(messageID: messageID, updates)
    }
}

extension MessageCenter: FannedOutPushSink {
    /// This node: the jobs of pushes fanned out at acceptance are leased to it.
    public var node: String { configuration.nodeID }
    /// The lease of those jobs; if this process dies, another center takes them over then.
    public var lease: Duration { configuration.lease }
    /// On while other nodes are live (``ClusterMembership/hasPeers``).
    public var peerRouting: PeerRouting? {
        guard let cluster, cluster.hasPeers else { return nil }
        return PeerRouting(deadAfter: cluster.deadAfter)
    }

    /// Takes the pushes the API of this process fanned out in one commit; they are routed
    /// in commit order, together.
    public func receive(_ pushes: [FannedOutPush]) {
        accepted.continuation.yield(pushes)
    }
}
