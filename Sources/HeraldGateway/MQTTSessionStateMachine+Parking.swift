extension MQTTSessionStateMachine {
    /// What an active session with nothing under way still holds: where its inbox is known,
    /// sent and acknowledged, and its next packet id. A parked connection keeps this and no
    /// more (``ParkedConnection``).
    struct ParkedSession: Equatable, Sendable {
        var nextPacketID: UInt16
        var ackedThrough: Int64
        var knownThrough: Int64
        var sentThrough: Int64
    }

    /// The session as a parked connection keeps it, if nothing is under way: active (not
    /// loading), nothing in flight, queued or held back, every seq sent acknowledged in
    /// order, and the store holding nothing the connection hasn't taken. Otherwise nil.
    var parkable: ParkedSession? {
        guard case .active(let session) = state, session.inFlight.isEmpty, session.queue.isEmpty, session.heldBack.isEmpty,
            session.pendingSeqs.isEmpty, session.ackedAhead.isEmpty, session.sentSeqs.isEmpty, !session.storeAhead
        else { return nil }
        return ParkedSession(
            nextPacketID: session.nextPacketID,
            ackedThrough: session.ackedThrough,
            knownThrough: session.knownThrough,
            sentThrough: sentThrough
        )
    }

    /// The machine of a parked connection brought back: active, as it was parked.
    init(resuming parked: ParkedSession, registrationID: String, maxInFlight: Int, maxQueued: Int) {
        var session = Session(registrationID: registrationID)
        session.nextPacketID = parked.nextPacketID
        session.ackedThrough = parked.ackedThrough
        session.knownThrough = parked.knownThrough
        self.init(maxInFlight: maxInFlight, maxQueued: maxQueued, active: session, sentThrough: parked.sentThrough)
    }
}
