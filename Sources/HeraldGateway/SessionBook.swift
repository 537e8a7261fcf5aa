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
    /// A claim to write, with whether its connection is still this node's connection of
    /// the device, asked just before the batch is written.
    struct Claim: Sendable {
        var device: DeviceIdentity
        var isCurrent: @Sendable () -> Bool
    }

    /// The connection closed, or was replaced here, before its claim was written.
    struct ClaimDropped: Error {}

    private let claims: GroupCommit<Claim, Result<SessionClaim, any Error>>
    private let releases: GroupCommit<SessionEpoch, Void>

    init(store: GatewayStore, node: String, logger: Logger) {
        claims = GroupCommit(maxBatch: 500, maxConcurrentCommits: 2) { batch in
            // A claim written for a connection already gone would take the device from a
            // connection that is still open (here or on another node) and hold it for
            // nobody: those are dropped.
            let current = batch.map { $0.isCurrent() }
            let devices = zip(batch, current).filter(\.1).map(\.0.device)
            do {
                var claimed = try await store.claimSessions(devices, node: node).makeIterator()
                return current.map { $0 ? claimed.next().map { .success($0) } ?? .failure(ClaimDropped()) : .failure(ClaimDropped()) }
            } catch {
                return batch.map { _ in .failure(error) }
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

    /// Claims the device's session for this node, unless `isCurrent` says by then that
    /// the connection is gone (``ClaimDropped``).
    func claim(_ device: DeviceIdentity, isCurrent: @escaping @Sendable () -> Bool) async throws -> SessionClaim {
        try await claims.submit(Claim(device: device, isCurrent: isCurrent)).get()
    }

    /// The connection of `session` closed.
    func release(_ session: SessionEpoch) async {
        await releases.submit(session)
    }
}
