import CoreMetrics
import Foundation
import HeraldStore
import Logging
import ServiceLifecycle

/// Every poll interval, releases the copies held by their app's quiet hours whose window
/// has ended: into their devices' inboxes, then routed as any batch. A service of the
/// node, beside the center whose router it shares (``MessageCenter/heldCopies``). Every
/// node runs it; they share the work copy by copy.
public struct HeldCopyReleases: Service {
    let store: CenterStore
    let router: DeliveryRouter
    let configuration: CenterConfiguration
    let metrics: CenterMetrics
    let logger: Logger

    public func run() async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: configuration.pollInterval)
                if Task.isCancelled { return }
                do {
                    for id in try await store.heldCopiesDue(limit: 16) {
                        guard let message = try await store.message(id: id) else { continue }
                        let prepared = router.prepare(message)
                        while !Task.isCancelled {
                            let targets = try await store.releaseHeld(
                                message: message,
                                payload: prepared.storedPayload,
                                limit: configuration.batchSize
                            )
                            if targets.isEmpty { break }
                            metrics.fannedOut.increment(by: targets.filter { !$0.isWithheld }.count)
                            try await router.route(prepared, targets: targets)
                        }
                    }
                } catch {
                    if !Task.isCancelled { logger.warning("Could not release held copies", metadata: ["error": "\(error)"]) }
                }
            }
        }
    }
}
