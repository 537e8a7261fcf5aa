import HeraldStore
import Logging

/// Claims and releases the cluster's sessions of this node's connections, group-committed:
/// a connect storm of thousands of devices is tens of statements, not thousands.
///
/// A connection claims its device before it loads its inbox (``MQTTConnectionHandler``), so
/// a copy stored before the claim is in that load, and a copy stored after it is routed to
/// this node by whichever node fans it out. The claim's epoch fences everything the
/// connection writes later: its release, its acknowledgements.
struct SessionBook: Sendable {
    private let claims: GroupCommit<DeviceIdentity, Result<SessionClaim, any Error>>
    private let releases: GroupCommit<SessionEpoch, Void>

    init(store: GatewayStore, node: String, logger: Logger) {
        claims = GroupCommit(maxBatch: 500, maxConcurrentCommits: 2) { devices in
            do {
                return try await store.claimSessions(devices, node: node).map { .success($0) }
            } catch {
                return devices.map { _ in .failure(error) }
            }
        }
        releases = GroupCommit(maxBatch: 1000, maxConcurrentCommits: 1) { sessions in
            do {
                try await store.releaseSessions(sessions)
            } catch is CancellationError {
                // Shutting down: the node's leaving the cluster clears its sessions.
            } catch {
                // The device shows online until the node is declared dead or the device
                // connects again; nothing is delivered wrong meanwhile (the center falls
                // back when this node says the device isn't connected).
                logger.warning("cannot record disconnects", metadata: ["error": "\(String(reflecting: error))", "herald.count": "\(sessions.count)"])
            }
            return sessions.map { _ in () }
        }
    }

    /// Claims the device's session for this node.
    func claim(_ device: DeviceIdentity) async throws -> SessionClaim {
        try await claims.submit(device).get()
    }

    /// The connection of `session` closed.
    func release(_ session: SessionEpoch) async {
        await releases.submit(session)
    }
}
