import Logging
import ServiceLifecycle

/// The first thing a node does when told to stop (SIGTERM): it fails its readiness (and
/// says so in its row) for `delay`, while still serving, so load balancers send it nothing
/// new before anything stops. Run it after the node's application, so its graceful
/// shutdown comes first; then the API stops, the center finishes what it claimed, the
/// gateway closes its connections at ``ClusterConfiguration/drainRate`` and the node leaves
/// the cluster.
public struct DrainGate: Service {
    let membership: ClusterMembership
    let delay: Duration
    let logger: Logger

    public init(membership: ClusterMembership, delay: Duration, logger: Logger) {
        self.membership = membership
        self.delay = delay
        self.logger = logger
    }

    public func run() async throws {
        try? await gracefulShutdown()
        membership.startDraining()
        logger.info("draining: readiness fails now", metadata: ["herald.delay": "\(delay)"])
        try? await Task.sleep(for: delay)
    }
}
