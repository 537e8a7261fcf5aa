import Foundation
import HeraldCenter
import HeraldCore
import HeraldGateway
import HeraldStore
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// This node's part in the cluster: it registers before its gateway listens, heartbeats,
/// declares dead the nodes that stopped heartbeating (clearing their devices' sessions and
/// taking what was routed to them), knows its live peers (the center routes copies to
/// them), and listens on its NOTIFY channel for devices taken over by another node and for
/// copies routed to it.
///
/// A node that was stopped for longer than ``ClusterConfiguration/deadAfter`` (or finds its
/// row deleted) was declared dead: its devices are other nodes' now. It closes all its
/// connections before anything else and registers again. What those connections write as
/// they close is fenced by their sessions' epochs.
///
/// A node whose heartbeats fail for that long asks its peers directly whether they reach
/// the database (``DatabaseContact``): if one does, this node alone is cut off, so it lets
/// its devices go to live nodes and refuses new ones until it is back; if none does, the
/// database is down for everyone and the devices stay.
public final class ClusterMembership: Service, ClusterView, Sendable {
    public let node: String
    let configuration: ClusterConfiguration
    public var deadAfter: Duration { configuration.deadAfter }
    private let store: ClusterStore
    private let gateway: Gateway
    private let logger: Logger
    private let probe: any ContactProbe
    /// The cluster's channel (``ClusterChannel/cluster``): a node joined.
    private let clusterNotices: AsyncStream<DatabaseListener.Event>
    /// This node's channel (``ClusterChannel/node(_:)``).
    private let nodeNotices: AsyncStream<DatabaseListener.Event>
    private let state: NIOLockedValueBox<State>
    /// Wakes the worker that routes copies routed to this node (``NodeRouteWorker``).
    public let routeWakeUps = WakeSignal()
    /// Finished once the node has joined: the gateway waits for it before it listens.
    private let joined: AsyncStream<Void>.Continuation

    private struct State {
        var peers: Set<String> = []
        /// Where each peer's HTTP API is, as they last said.
        var peerAddresses: [String: String] = [:]
        var draining = false
        /// When the last heartbeat was begun, whether it succeeded or not.
        var lastAttempt: ContinuousClock.Instant?
        var contact: DatabaseContact
        /// The peers said they don't reach the database either, and the node said it keeps
        /// its devices: once per outage.
        var keptThroughOutage = false
        /// Where this node's HTTP API is, once it listens (``advertise(httpAddress:)``).
        var httpAddress: String?
    }

    /// How long a peer is given to answer whether it reaches the database.
    static let probeTimeout: Duration = .seconds(3)
    /// How long the node's own fresh connection is given: longer, as a false "cut off"
    /// closes every device connection (a loaded database, or node, can take seconds to
    /// accept a connection).
    static let ownProbeTimeout: Duration = .seconds(6)

    /// - Parameters:
    ///   - joined: finished once the node has joined (the gateway's wait).
    ///   - listener: the node's LISTEN connection, which the membership subscribes to.
    public init(
        node: String,
        configuration: ClusterConfiguration,
        store: ClusterStore,
        gateway: Gateway,
        joined: AsyncStream<Void>.Continuation,
        probe: any ContactProbe,
        listener: DatabaseListener,
        logger: Logger
    ) {
        self.clusterNotices = listener.subscribe(ClusterChannel.cluster)
        self.nodeNotices = listener.subscribe(ClusterChannel.node(node))
        self.joined = joined
        self.probe = probe
        self.state = NIOLockedValueBox(State(contact: DatabaseContact(deadAfter: configuration.deadAfter)))
        self.node = node
        self.configuration = configuration
        self.store = store
        self.gateway = gateway
        self.logger = logger
    }

    /// Whether other live nodes are known: only then does the center look up where a device
    /// not connected here is connected.
    public var hasPeers: Bool { state.withLockedValue { !$0.peers.isEmpty } }

    /// Whether the node drains (SIGTERM): readiness fails, and the row says so.
    public var isDraining: Bool { state.withLockedValue { $0.draining } }

    public func startDraining() {
        state.withLockedValue { $0.draining = true }
    }

    /// Where the peers reach this node's HTTP API (`host:port`): written with the next
    /// heartbeat.
    public func advertise(httpAddress: String) {
        state.withLockedValue { $0.httpAddress = httpAddress }
    }

    /// Registers the node, retrying every second until the database answers or the task
    /// is cancelled. The gateway listens only after this: a device connected here is then
    /// always on a registered node, which its peers route copies to.
    public func join() async throws {
        while true {
            do {
                try await store.register(node: node)
                state.withLockedValue {
                    $0.lastAttempt = .now
                    _ = $0.contact.reached(at: .now)
                }
                try await refreshPeers()
                logger.info(
                    "joined the cluster",
                    metadata: ["herald.node": "\(node)", "herald.peers": "\(state.withLockedValue { $0.peers.count })"]
                )
                return
            } catch {
                try Task.checkCancellation()
                logger.warning("cannot register the node; retrying", metadata: ["error": "\(String(reflecting: error))"])
                try await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Joins, then heartbeats and listens until the graceful shutdown, then leaves. Run it
    /// before the gateway (which waits for the join) and stop it after: the node leaves once
    /// its devices are gone.
    ///
    /// It listens before it registers: a peer that registers later is heard of by its
    /// NOTIFY, one that registered before is read by the registration's look at the
    /// nodes. Otherwise a peer that started at the same moment was unknown until the next
    /// heartbeat, and copies for its devices stayed in their inboxes meanwhile.
    public func run() async throws {
        let (listening, listened) = AsyncStream.makeStream(of: Void.self)
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.listen(onListening: { listened.finish() }) }
                // Registering waits for the LISTEN only so long: the first heartbeats also
                // read the nodes.
                group.addTask {
                    await withTaskGroup(of: Void.self) { wait in
                        wait.addTask { for await _ in listening {} }
                        wait.addTask { try? await Task.sleep(for: .seconds(5)) }
                        await wait.next()
                        wait.cancelAll()
                    }
                    // Cancelled (a shutdown) before it could register: the gateway stops
                    // waiting too, and stops.
                    let registered = (try? await self.join()) != nil
                    self.joined.finish()
                    guard registered else { return }
                    await withDiscardingTaskGroup { beats in
                        beats.addTask { await self.heartbeats() }
                        beats.addTask { await self.watchContact() }
                    }
                }
            }
        }
        await leave()
    }

    /// The node leaves the cluster: its devices' sessions are cleared and its row deleted.
    func leave() async {
        do {
            try await store.leave(node: node)
        } catch {
            logger.warning("cannot leave the cluster; the node is declared dead after its heartbeats stop", metadata: ["error": "\(error)"])
        }
    }

    /// Whether this node holds the lease on the cluster-wide task `name` (the purges) for
    /// `lease`; false when another node does, or the database doesn't answer.
    public func holds(_ name: String, lease: Duration) async -> Bool {
        (try? await store.holdTask(name, node: node, lease: lease)) ?? false
    }

    private func heartbeats() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: configuration.heartbeatInterval)
            guard !Task.isCancelled else { return }
            await beat()
        }
    }

    /// One heartbeat: renew (or find the node declared dead and start over), sweep dead
    /// nodes, refresh the peers, and close connections whose devices another node took.
    func beat() async {
        let started = ContinuousClock.now
        let last = state.withLockedValue { state in
            defer { state.lastAttempt = started }
            return state.lastAttempt
        }
        if let last, started - last > configuration.deadAfter {
            // The process didn't run for longer than a peer waits (it was stopped, or
            // starved): its devices may have moved. Nothing more is delivered to them from
            // here. The time is counted from the end of the last beat: a beat that waited
            // on a slow or cut-off database ran all along (if peers declared the node dead
            // meanwhile, the renewal below finds out and fences once), and connections
            // stay up through a database outage.
            await fence(reason: "no heartbeat attempted for \(started - last)")
        }
        defer { state.withLockedValue { $0.lastAttempt = .now } }
        do {
            let (draining, address) = state.withLockedValue { ($0.draining, $0.httpAddress) }
            let alive = try await store.heartbeat(node: node, draining: draining, httpAddress: address)
            if !alive {
                // Declared dead: registering clears the sessions naming this node, so the
                // connections open now (some may have come since the fence) are closed
                // after it, and reconnect to claim their devices again.
                try await store.register(node: node)
                // A node that let its devices go when it was cut off has taken none since.
                if !state.withLockedValue({ $0.contact.cutOff }) { await fence(reason: "declared dead by another node") }
            }
            let now = ContinuousClock.now
            let (wasCutOff, maySweep) = state.withLockedValue { state in
                state.keptThroughOutage = false
                return (state.contact.reached(at: now), state.contact.maySweep(at: now))
            }
            if wasCutOff {
                gateway.refuseSessions(false)
                logger.notice("the database is reachable again; taking device connections")
            }
            if maySweep {
                let (dead, adopted) = try await store.sweepDeadNodes(deadAfter: configuration.deadAfter, by: node)
                if !dead.isEmpty {
                    logger.warning(
                        "declared nodes dead",
                        metadata: ["herald.nodes": "\(dead.joined(separator: ","))", "herald.routes_taken": "\(adopted)"]
                    )
                }
                if adopted > 0 { routeWakeUps.signal() }
            }
            try await refreshPeers()
            if hasPeers { try await gateway.closeSupersededSessions() }
        } catch {
            if !Task.isCancelled { logger.warning("heartbeat failed", metadata: ["error": "\(String(reflecting: error))"]) }
        }
    }

    /// Every heartbeat interval, checks whether the heartbeats have failed for longer than
    /// a peer waits (``DatabaseContact/shouldAskPeers(at:)``); then asks the peers. Separate
    /// from the heartbeats, which may hang on a cut-off link for much longer.
    private func watchContact() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: configuration.heartbeatInterval)
            guard !Task.isCancelled else { return }
            await checkContact()
        }
    }

    /// Asks the peers whether they reach the database, when this node hasn't for longer
    /// than ``ClusterConfiguration/deadAfter``; if one does, lets the devices go.
    func checkContact() async {
        let addresses: [String: String] = state.withLockedValue { state in
            guard state.contact.shouldAskPeers(at: .now) else { return [:] }
            return state.peerAddresses
        }
        guard !addresses.isEmpty else { return }
        let probe = self.probe
        let reaching: String? = await withTaskGroup(of: String?.self) { group in
            for (peer, address) in addresses {
                group.addTask { await probe.peerReachesDatabase(address, timeout: Self.probeTimeout) ? peer : nil }
            }
            for await answer in group where answer != nil {
                group.cancelAll()
                return answer
            }
            return nil
        }
        guard let reaching else {
            guard state.withLockedValue({ !$0.keptThroughOutage && $0.contact.shouldAskPeers(at: .now) }) else { return }
            state.withLockedValue { $0.keptThroughOutage = true }
            logger.warning(
                "the database has not answered for longer than cluster.deadAfter, nor any peer's; keeping the device connections",
                metadata: ["herald.peers": "\(addresses.keys.sorted().joined(separator: ","))"]
            )
            return
        }
        // A peer reaches the database: this node may be the one cut off, or the database
        // may be just back (after an outage of the whole cluster, every node comes back at
        // its own moment). Only if a connection of its own fails now is it cut off.
        if await probe.reachesDatabase(timeout: Self.ownProbeTimeout) {
            logger.info("a connection of this node's reaches the database again", metadata: ["herald.peer": "\(reaching)"])
            return
        }
        // The heartbeat may have gone through meanwhile: then the node is not cut off.
        let cutOff = state.withLockedValue { state in
            guard state.contact.shouldAskPeers(at: .now) else { return false }
            state.contact.peerReachesIt()
            return true
        }
        guard cutOff else { return }
        gateway.refuseSessions(true)
        await fence(reason: "cut off from the database, which \(reaching) reaches")
    }

    private func fence(reason: String) async {
        logger.warning("closing every device connection: this node may have been declared dead", metadata: ["herald.reason": "\(reason)"])
        await gateway.closeAllFenced()
    }

    private func refreshPeers() async throws {
        let live = try await store.nodes(deadAfter: configuration.deadAfter).filter { $0.nodeID != node && $0.alive }
        state.withLockedValue { state in
            state.peers = Set(live.map(\.nodeID))
            state.peerAddresses = Dictionary(live.compactMap { peer in peer.httpAddress.map { (peer.nodeID, $0) } }, uniquingKeysWith: { a, _ in a })
        }
    }

    /// Hears the cluster's and this node's channels (``DatabaseListener``). Once they are
    /// listened to, the route worker looks for copies routed here; after a reconnection,
    /// every connected device reads its inbox again (the copies another node stored for it
    /// meanwhile, whose notices were lost). What else a lost notification would have said
    /// is found by the heartbeat's checks and the route worker's poll.
    private func listen(onListening: @escaping @Sendable () -> Void) async {
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await event in self.clusterNotices {
                    guard case .notification(let peer) = event, peer != self.node else { continue }
                    self.state.withLockedValue { _ = $0.peers.insert(peer) }
                }
            }
            group.addTask {
                for await event in self.nodeNotices {
                    switch event {
                    case .listening(let again):
                        onListening()
                        self.routeWakeUps.signal()
                        if again { self.gateway.inboxesMayHaveChanged() }
                    case .notification(let payload):
                        switch ClusterNotice(nodePayload: payload) {
                        case .sessionClaimed(let registrationID, let epoch):
                            self.gateway.sessionClaimedElsewhere(registrationID: registrationID, epoch: epoch)
                        case .routes:
                            self.routeWakeUps.signal()
                        case .inboxChanged(let registrationID):
                            self.gateway.inboxChanged(registrationID: registrationID)
                        case nil:
                            break
                        }
                    }
                }
            }
        }
    }
}
