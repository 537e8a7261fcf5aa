import Foundation
import HeraldCenter
import HeraldCore
import HeraldStore
import Logging
import ServiceLifecycle

/// The housekeeping every node offers and one does at a time (the cluster task `purge`,
/// leased for three intervals): every `center.inboxPurgeInterval` it deletes expired inbox
/// rows and spent daily counts, then messages older than `center.messageRetentionDays`
/// (their deliveries and jobs go with them), then events older than `center.eventRetention`,
/// each in bounded batches until none is left. (One node at a time: batches would skip rows
/// another node is deleting, but the scans would be repeated on every node.)
struct PurgeService: Service {
    let store: PurgeStore
    let cluster: ClusterMembership
    let interval: Duration
    let messageRetention: Duration
    let eventRetention: Duration
    let logger: Logger

    init(store: PurgeStore, cluster: ClusterMembership, configuration: CenterConfiguration, logger: Logger) {
        self.store = store
        self.cluster = cluster
        self.interval = configuration.inboxPurgeInterval
        self.messageRetention = configuration.messageRetention
        self.eventRetention = configuration.eventRetention
        self.logger = logger
    }

    func run() async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard await cluster.holds("purge", lease: interval * 3) else { continue }
                do {
                    try await purge()
                } catch {
                    if Task.isCancelled { return }
                    logger.warning("purging expired inbox rows or messages failed; trying again later", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    private func purge() async throws {
        let inboxBatch = 10_000
        while try await store.purgeExpiredInbox(limit: inboxBatch) == inboxBatch, !Task.isCancelled {}
        while try await store.purgeDailyCounts(limit: inboxBatch) == inboxBatch, !Task.isCancelled {}
        let cutoff = Date().addingTimeInterval(-messageRetention.timeInterval)
        let messageBatch = 1_000
        var purged = 0
        var count = messageBatch
        while count == messageBatch, !Task.isCancelled {
            count = try await store.purgeMessages(sentBefore: cutoff, limit: messageBatch)
            purged += count
        }
        if purged > 0 { logger.info("Deleted messages past their retention", metadata: ["herald.messages": "\(purged)"]) }
        let eventCutoff = Date().addingTimeInterval(-eventRetention.timeInterval)
        let eventBatch = 10_000
        while try await store.purgeEvents(before: eventCutoff, limit: eventBatch) == eventBatch, !Task.isCancelled {}
    }
}
