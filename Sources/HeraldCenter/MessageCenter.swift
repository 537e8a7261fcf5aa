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
/// taken over when its lease runs out.
///
/// Beside it, sharing its router, the node runs ``retries`` (the channels' retries, due
/// from the deliveries table) and ``heldCopies`` (copies the quiet hours held, due at the
/// window's end) as services of their own.
///
/// Graceful shutdown: workers stop between batches and give their jobs back; nothing
/// committed is lost.
public final class MessageCenter: Service, Sendable {
    private let configuration: CenterConfiguration
    private let store: CenterStore
    private let runner: PushJobRunner
    private let router: DeliveryRouter
    private let cluster: (any ClusterView)?
    private let nodeRoutes: NodeRouteWorker?
    /// The channels' retries as they come due: run by the node beside the center.
    public let retries: ChannelRetries
    /// Copies held by their app's quiet hours, released at the window's end: run by the
    /// node beside the center.
    public let heldCopies: HeldCopyReleases
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
        retries = ChannelRetries(store: store, router: router, configuration: configuration, logger: logger)
        heldCopies = HeldCopyReleases(store: store, router: router, configuration: configuration, metrics: metrics, logger: logger)
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
                group.addTask { await self.listen() }
                group.addTask { await self.tick() }
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
