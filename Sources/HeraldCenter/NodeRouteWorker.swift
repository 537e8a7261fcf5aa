import HeraldStore
import Logging
import NIOConcurrencyHelpers

/// Routes the copies other nodes routed to this one (``CenterStore/route(_:hops:)``): the
/// devices are connected here, so they go over their MQTT connections with the same
/// acknowledgement timeout and APNs fallback as any copy routed here; a device that left
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

    func run(wakeUps: AsyncStream<Void>, stopping: @escaping @Sendable () -> Bool) async {
        let inFlight = NIOLockedValueBox(Set<Int64>())
        await withDiscardingTaskGroup { group in
            while !stopping() {
                var full = false
                do {
                    let busy = inFlight.withLockedValue { Array($0) }
                    let routes = busy.count >= window ? [] : try await store.routes(for: node, excluding: busy, limit: window - busy.count)
                    full = !routes.isEmpty && routes.count == window - busy.count
                    for route in routes {
                        inFlight.withLockedValue { _ = $0.insert(route.id) }
                        group.addTask {
                            await self.route(route)
                            inFlight.withLockedValue { _ = $0.remove(route.id) }
                        }
                    }
                } catch {
                    if !stopping() { logger.warning("cannot read the copies routed to this node", metadata: ["error": "\(error)"]) }
                }
                if full { continue }
                // A NOTIFY, or the center's poll tick; none once the stream has finished.
                if await wakeUps.first(where: { _ in true }) == nil { break }
            }
        }
    }

    /// Routes one row's copies and deletes it; a row that fails stays for the next read.
    private func route(_ route: NodeRoute) async {
        do {
            if let message = try await store.message(id: route.messageID) {
                let targets = try await store.pendingTargets(messageID: message.id, deviceIDs: route.deviceIDs)
                if !targets.isEmpty {
                    let prepared = router.prepare(message)
                    let updates = try await router.outcomes(of: [(prepared, targets)], hops: route.hops)[0]
                    try await store.recordDeliveries(messageID: message.id, updates)
                }
            }
            try await store.finishRoutes([route.id])
        } catch {
            logger.warning("routing copies routed to this node failed; retrying", metadata: ["error": "\(error)", "herald.route": "\(route.id)"])
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
