import Foundation
import HeraldRouting
import HeraldStore
import Logging
import ServiceLifecycle

/// Sends the channels' retries as they come due: a service of the node, beside the center
/// whose router it shares (``MessageCenter/retries``).
///
/// A claimed batch is sent while the next is claimed (up to ``batchesInFlight`` at once),
/// and the messages of a batch are sent side by side: a copy whose request its service
/// never answers holds only itself (each answer is recorded as it comes), not the retries
/// due after it, of any app. At a graceful shutdown it stops; a claimed retry it had not
/// sent comes due again when its claim's lease runs out.
public struct ChannelRetries: Service {
    let store: CenterStore
    let router: DeliveryRouter
    let configuration: CenterConfiguration
    let logger: Logger

    /// Claimed batches of retries sent at once.
    static let batchesInFlight = 8

    /// Messages of a claimed batch sent at once.
    static let messagesInFlight = 16

    public func run() async {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                var inFlight = 0
                while !Task.isCancelled {
                    if inFlight >= Self.batchesInFlight {
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
                        group.addTask { await send(due) }
                        continue
                    }
                    try? await Task.sleep(for: configuration.pollInterval)
                }
            }
        }
    }

    /// Sends a claimed batch of retries, each message's copies beside the others' (up to
    /// ``messagesInFlight`` messages at once: each costs the pool a read and a write).
    private func send(_ due: [DueRetry]) async {
        await withTaskGroup(of: Void.self) { group in
            var inFlight = 0
            for (messageID, retries) in Dictionary(grouping: due, by: \.messageID) {
                if inFlight >= Self.messagesInFlight {
                    await group.next()
                    inFlight -= 1
                }
                inFlight += 1
                group.addTask {
                    do {
                        try await send(messageID: messageID, retries)
                    } catch {
                        if !Task.isCancelled { logger.warning("Retries failed; trying again", metadata: ["error": "\(error)"]) }
                    }
                }
            }
        }
    }

    /// Sends one message's due retries, and records what could not be recorded as it came.
    private func send(messageID: Int64, _ retries: [DueRetry]) async throws {
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
                    group.addTask { await router.send(prepared, routed: copies, attempts: attempts) }
                }
                var updates: [DeliveryUpdate] = []
                for await some in group { updates += some }
                return updates
            }
        }
        try await store.recordDeliveries(messageID: messageID, updates)
    }
}
