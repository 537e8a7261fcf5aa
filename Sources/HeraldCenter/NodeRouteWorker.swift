import HeraldStore
import Logging
import NIOConcurrencyHelpers

/// Routes the copies other nodes routed to this one (``CenterStore/route(_:hops:)``): the
/// devices are connected here, so they go over their MQTT connections with the same
/// acknowledgement timeout and channel fallback as any copy routed here; a device that left
/// meanwhile is followed to its next node (a few hops), or falls back. Each row is deleted
/// once its copies' outcomes are recorded, so a node that dies with rows unrouted leaves
/// them to the node that declares it dead.
///
/// Woken by a NOTIFY, and by the center's tick every ``CenterConfiguration/pollInterval``
/// (so no notification is needed for a copy to arrive).
struct NodeRouteWorker: Sendable {
    let store: CenterStore
    let router: DeliveryRouter
    let node: String
    let logger: Logger
    /// Rows read at a time, and routed at once at most.
    let window = 256
    /// How long a read of the routed rows may take. A read cut off by an outage of the
    /// database has been seen never to end (postgres-nio; ``abandoning(_:when:)``): awaited,
    /// it stopped this worker for good, and the copies other nodes routed here waited in
    /// their rows. Given up, the next wake-up reads again (a plain read: nothing to undo).
    static let readDeadline: Duration = .seconds(10)

    func run(wakeUps: AsyncStream<Void>, stopping: @escaping @Sendable () -> Bool) async {
        let inFlight = NIOLockedValueBox(Set<Int64>())
        await withDiscardingTaskGroup { group in
            while !stopping() {
                var full = false
                do {
                    let busy = inFlight.withLockedValue { Array($0) }
                    let limit = window - busy.count
                    let routes =
                        busy.count >= window
                        ? []
                        : try await abandoning(after: Self.readDeadline) { [store, node] in
                            try await store.peers.routes(for: node, excluding: busy, limit: limit)
                        }
                    full = !routes.isEmpty && routes.count == window - busy.count
                    if !routes.isEmpty {
                        // The rows read together are routed together: a few statements for
                        // all of them (a unicast push's row holds one copy).
                        inFlight.withLockedValue { $0.formUnion(routes.map(\.id)) }
                        group.addTask {
                            await self.route(routes)
                            inFlight.withLockedValue { $0.subtract(routes.map(\.id)) }
                        }
                    }
                } catch {
                    if !stopping() { logger.warning("cannot read the copies routed to this node", metadata: ["error": "\(error)"]) }
                }
                if full { continue }
                // A NOTIFY, or the center's tick; none once the stream has finished.
                if await wakeUps.first(where: { _ in true }) == nil { break }
            }
        }
    }

    /// Routes the copies of `routes` still pending, all in one call to the router (per
    /// number of hops), and records their outcomes and deletes the rows in one statement.
    /// Rows that fail stay for the next read.
    private func route(_ routes: [NodeRoute]) async {
        do {
            let live = routes.filter { !$0.targets.isEmpty }
            var outcomes: [(messageID: Int64, updates: [DeliveryUpdate])] = []
            for (hops, rows) in Dictionary(grouping: live, by: \.hops) {
                let batches = rows.compactMap { route in route.message.map { (prepared: router.prepare($0), targets: route.targets) } }
                guard !batches.isEmpty else { continue }
                let updates = try await router.outcomes(of: batches, hops: hops)
                outcomes += zip(batches, updates).map { (messageID: $0.0.prepared.message.id, updates: $0.1) }
            }
            try await store.recordDeliveries(outcomes, routes: routes.map(\.id))
        } catch {
            logger.warning(
                "routing copies routed to this node failed; retrying",
                metadata: ["error": "\(error)", "herald.routes": "\(routes.count)"]
            )
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
