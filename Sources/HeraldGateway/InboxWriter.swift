import HeraldStore

/// A message with a time to live for many devices: stored in their inboxes, then handed to
/// their connections.
struct StoredDelivery: Sendable {
    var inbox: InboxBroadcast
    var message: GatewayMessage
    var devices: [DeviceIdentity]
    var ackTimeout: Duration
}

/// Stores messages with a time to live in their devices' inboxes, group-committed, and
/// hands them to the devices' connections in the order of their seqs.
///
/// The messages handed to the gateway while a write is in flight are stored by the next
/// one, with one statement that updates each device's row once for all of its new
/// messages: concurrent broadcasts to the same devices used to queue one by one on the
/// same row locks, and each updated every row. One write at a time, and the writer hands
/// the copies over before the next write starts, so each connection gets its seqs in
/// order: a connection that sees a seq skipped reloads the device's inbox, and broadcasts
/// whose tasks resumed out of order made thousands of connections do so at once.
struct InboxWriter: Sendable {
    private let commits: GroupCommit<StoredDelivery, Result<HandedOver, any Error>>

    /// - Parameter maxBatch: Messages per statement.
    init(context: GatewayContext, maxBatch: Int = 64) {
        commits = GroupCommit(maxBatch: maxBatch, maxConcurrentCommits: 1) { deliveries in
            do {
                let seqs = try await context.store.enqueue(deliveries.map(\.inbox))
                return zip(deliveries, seqs).map { delivery, seqs in
                    let copies = delivery.devices.map { GatewayDelivery(message: delivery.message, device: $0, seq: seqs[$0.deviceID]) }
                    return .success(context.handOver(copies, ackTimeout: delivery.ackTimeout))
                }
            } catch {
                return deliveries.map { _ in .failure(error) }
            }
        }
    }

    /// Stores the message in each device's inbox and hands the copies to the connections
    /// (a device that no longer exists gets it unstored).
    func store(_ delivery: StoredDelivery) async throws -> HandedOver {
        try await commits.submit(delivery).get()
    }
}
