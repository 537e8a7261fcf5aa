import CoreMetrics
import HeraldStore
import Logging
import NIOCore

/// The connection's part in the cluster's sessions and its inbox loads: the device's
/// session is claimed before the first load, handed to the connection that replaces this
/// one here, and given up when another node claims it.
extension MQTTConnectionHandler {
    /// Loads a page of the device's unacknowledged messages after seq `after` and hands it
    /// to the session; the first load claims the device's session in the cluster before it
    /// reads (``SessionBook``). A claim or load that fails closes the connection: the
    /// device reconnects and its replay loads again.
    func loadInbox(after: Int64, channel: any Channel) {
        guard let device else { return }
        let store = context.store
        let acks = context.acks
        let pageSize = max(1, min(context.configuration.replayPageSize, context.configuration.maxQueued))
        let handler = NIOLoopBound(self, eventLoop: channel.eventLoop)
        let gateway = context
        let claiming = epoch == nil && !self.claiming
        if claiming { self.claiming = true }
        let dupThrough = replayDUPThrough
        let id = connectionID
        context.tasks.submit {
            var claim: SessionClaim?
            if claiming {
                let registry = gateway.registry
                claim = try? await gateway.sessions.claim(device) { registry.connection(device.registrationID)?.id == id }
                if let claim { gateway.registry.claimed(device.registrationID, id: id, epoch: claim.epoch) }
            }
            // Read before the load too: a batch written meanwhile is in neither otherwise.
            let sentBefore = acks.pendingSent(deviceID: device.deviceID) ?? 0
            let snapshot = claiming && claim == nil ? nil : try? await store.pendingInbox(deviceID: device.deviceID, after: after, limit: pageSize)
            let acked = acks.pendingAcknowledgement(deviceID: device.deviceID) ?? 0
            // DUP on what an earlier connection sent (recorded, or about to be), on all the
            // claim found inbox held when one may have sent without a record, and on what a
            // process before this one may have sent; not on the rest.
            let sent = max(sentBefore, acks.pendingSent(deviceID: device.deviceID) ?? 0)
            let unrecordedThrough = claim?.earlierMayHaveSent == true ? snapshot?.latest ?? 0 : dupThrough
            let replay = (snapshot?.messages ?? []).filter { $0.seq > acked }.map {
                Outgoing(
                    seq: $0.seq,
                    msgID: $0.msgID,
                    payload: ByteBuffer(bytes: $0.payload),
                    dup: $0.wasSent || $0.seq <= max(sent, unrecordedThrough) || gateway.mayHaveBeenSentBeforeStart($0.msgID),
                    token: 0
                )
            }
            channel.eventLoop.execute {
                let handler = handler.value
                if let claim {
                    handler.replayDUPThrough = max(handler.replayDUPThrough, unrecordedThrough)
                    handler.claimed(claim, device: device)
                }
                guard let snapshot else {
                    handler.perform(handler.machine.close(.storeUnavailable))
                    return
                }
                handler.context.metrics.replays.increment(by: replay.count)
                handler.perform(handler.machine.replayLoaded(replay, through: snapshot.through, complete: snapshot.isComplete))
            }
        }
    }

    /// The device's session is this connection's from `claim.epoch` on (or from a higher
    /// epoch it was handed, ``adopt(epoch:)``). A connection that closed while it claimed
    /// gives the session back at once, or to the connection that replaced it here.
    private func claimed(_ claim: SessionClaim, device: DeviceIdentity) {
        let held = max(epoch ?? 0, claim.epoch)
        epoch = held
        claiming = false
        if claimedElsewhere > held { perform(machine.close(.takenOver)) }
        if let previous = claim.previousNode {
            logger.debug("device taken over from another node", metadata: metadata(["herald.previous_node": "\(previous)"]))
        }
        if !machine.isOpen { releaseSession() }
    }

    /// This connection is closed: tells the cluster the device is offline, unless a newer
    /// connection claimed it. Claims of one device on this node may commit out of the
    /// order of their connections (two batches at once), so a connection replaced here may
    /// hold the newest epoch: it hands it to the connection that replaced it instead, which
    /// holds the device's session from then on.
    func releaseSession() {
        guard let device, let epoch else { return }
        if let current = context.registry.connection(device.registrationID), current.id != connectionID {
            context.registry.claimed(device.registrationID, id: current.id, epoch: epoch)
            context.withConnection(current, key: RegistrationKey(device.registrationID)) { $0.adopt(epoch: epoch) }
            return
        }
        let sessions = context.sessions
        let acks = context.acks
        // After what this connection sent and had acknowledged is written: the next
        // connection, on any node, reads it once the session is free.
        context.tasks.submit {
            await acks.written()
            await sessions.release(SessionEpoch(deviceID: device.deviceID, epoch: epoch))
        }
    }

    /// The connection this one replaced here held the device's session at `epoch`, newer
    /// than this one's claim may be: this connection holds it now.
    func adopt(epoch handed: Int64) {
        epoch = max(epoch ?? 0, handed)
        if !machine.isOpen { releaseSession() }
    }

    /// Another node claimed the device with `newer`: this connection closes, unless it is
    /// itself the newer one (its claim came later). A notice that comes while this
    /// connection's own claim is under way is kept, and acted on once the claim is in.
    func sessionClaimedElsewhere(epoch newer: Int64) {
        guard let epoch, !claiming else {
            claimedElsewhere = max(claimedElsewhere, newer)
            return
        }
        guard epoch < newer else { return }
        perform(machine.close(.takenOver))
    }
}
