import HeraldStore
import Logging
import ServiceLifecycle

/// Chains the audit entries pushes wrote in their own commits (`audit_pending`) into the
/// log, every ``interval``: they are tamper-evident within about that long even when
/// nothing reads or appends to the log meanwhile (both seal first). Any node's sealer
/// seals every node's entries, so a node that stopped leaves none behind.
struct AuditSealer: Service {
    let store: APIStore
    var interval: Duration = .seconds(1)
    let logger = Logger(label: "herald.api.audit")

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: self.interval)
                do {
                    try await self.store.audit.sealPending()
                } catch is CancellationError {
                    return
                } catch {
                    self.logger.warning("cannot chain the pushes' audit entries yet", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
