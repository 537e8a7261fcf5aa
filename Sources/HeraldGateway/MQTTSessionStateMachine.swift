import DequeModule
import HeraldMQTT
import HeraldStore
import NIOCore

/// The protocol logic of one device connection, without I/O: packets and events in,
/// actions out. The channel handler executes the actions.
///
/// Lifecycle: awaiting CONNECT → authenticating → replaying (loading the inbox; live
/// stored messages are held back so order is kept) → active → closed. A connection goes
/// back to replaying whenever it loads the inbox again.
///
/// The inbox is read a page at a time: when a load stops at its page size, the next page
/// is read as soon as acknowledgements leave fewer than a window's worth queued, so a
/// device with any number of stored messages gets them all, in order, on one connection.
/// A live stored message that can't be queued (it skips a seq, or the queue is full) is
/// left to the store, which has it, and read with the next page: a device that doesn't
/// acknowledge holds at most its in-flight window and a bounded queue in memory.
///
/// Stored messages go out in seq order, so the device's in-order PUBACKs make "acknowledged
/// through" exact. A live message whose seq skips one (concurrent fan-outs can reach the
/// gateway out of order) is held back and the inbox loaded again: the store has every seq
/// below it, since seqs are taken under the device's row lock. Sending it first would let
/// its acknowledgement move the position past the missing one, which a disconnect would
/// then lose.
struct MQTTSessionStateMachine {
    enum State {
        case awaitingConnect
        case authenticating
        case replaying(Session)
        case active(Session)
        case closed
        /// Held while a session is changed in place: with the session still in `state`,
        /// its collections would be copied on every change.
        case modifying
    }

    private(set) var state: State = .awaitingConnect
    /// The highest inbox seq sent on this connection (0: none), kept outside `state` so
    /// reading it copies no session.
    private(set) var sentThrough: Int64 = 0
    var maxInFlight: Int { Int(inFlightLimit) }
    /// Messages queued behind the window: a stored message beyond it is left to the store;
    /// one that isn't stored (time to live 0) closes the connection as a slow consumer.
    var maxQueued: Int { Int(queueLimit) }
    // Stored in 8 bytes for both (the configuration keeps them within 65,535 and 1,000,000).
    private let inFlightLimit: UInt32
    private let queueLimit: UInt32

    init(maxInFlight: Int, maxQueued: Int) {
        inFlightLimit = UInt32(clamping: maxInFlight)
        queueLimit = UInt32(clamping: maxQueued)
    }

    /// A session already active, with this much sent (a parked connection brought back).
    init(maxInFlight: Int, maxQueued: Int, active session: Session, sentThrough: Int64) {
        self.init(maxInFlight: maxInFlight, maxQueued: maxQueued)
        (state, self.sentThrough) = (.active(session), sentThrough)
    }

    var registrationID: String? {
        switch state {
        case .replaying(let session), .active(let session): session.registrationID
        default: nil
        }
    }

    var isOpen: Bool {
        if case .closed = state { return false }
        return true
    }

    /// The state without its session: what to switch on before changing a session, since a
    /// switch over `state` keeps a copy of it (and so of the session's collections) alive.
    private enum Phase {
        case awaitingConnect, authenticating, replaying, active, closed, modifying
    }

    private var phase: Phase {
        switch state {
        case .awaitingConnect: .awaitingConnect
        case .authenticating: .authenticating
        case .replaying: .replaying
        case .active: .active
        case .closed: .closed
        case .modifying: .modifying
        }
    }

    /// Moves the session out of `state`, leaving `.modifying`, so it changes in place
    /// instead of copying its collections. The caller puts it back (or closes).
    private mutating func takeSession() -> Session {
        let session: Session
        switch state {
        case .replaying(let current), .active(let current): session = current
        default: preconditionFailure("MQTTSessionStateMachine: no session in \(phase)")
        }
        state = .modifying
        return session
    }

    // MARK: Packets from the device

    mutating func packetReceived(_ packet: MQTTPacket) -> Action {
        switch phase {
        case .awaitingConnect:
            guard case .connect(let connect) = packet else { return closeNow(.protocolViolation) }
            guard let username = connect.username, let passwordBuffer = connect.password else {
                state = .closed
                return .sendAndClose(.connAck(.init(returnCode: .badUsernameOrPassword)), .authenticationFailed)
            }
            guard !connect.clientID.isEmpty else {
                state = .closed
                return .sendAndClose(.connAck(.init(returnCode: .identifierRejected)), .authenticationFailed)
            }
            state = .authenticating
            return .authenticate(
                clientID: connect.clientID,
                username: username,
                password: String(buffer: passwordBuffer),
                keepAlive: connect.keepAlive
            )
        case .authenticating:
            // Nothing may come before the CONNACK.
            return closeNow(.protocolViolation)
        case .replaying, .active:
            var loading = phase == .replaying
            var session = takeSession()
            let action = sessionPacket(packet, &session, loading: &loading)
            if isOpen { state = loading ? .replaying(session) : .active(session) }
            return action
        case .closed:
            return .none
        case .modifying:
            preconditionFailure("MQTTSessionStateMachine re-entered")
        }
    }

    private mutating func sessionPacket(_ packet: MQTTPacket, _ session: inout Session, loading: inout Bool) -> Action {
        switch packet {
        case .pingReq:
            return .send([.pingResp])
        case .disconnect:
            return closeNow(.clientDisconnected)
        case .pubAck(let packetID):
            guard let outgoing = session.inFlight.removeValue(forKey: packetID) else {
                return closeNow(.protocolViolation)
            }
            if let index = session.inFlightOrder.firstIndex(of: packetID) { session.inFlightOrder.remove(at: index) }
            var moved: Int64?
            if let seq = outgoing.seq {
                session.ackedAhead.insert(seq)
                while let first = session.sentSeqs.first, session.ackedAhead.remove(first) != nil {
                    session.sentSeqs.removeFirst()
                    session.pendingSeqs.remove(first)
                    // A late seq below the position (see `sentSeqs`) never moves it back.
                    if first > session.ackedThrough {
                        session.ackedThrough = first
                        moved = first
                    }
                }
            }
            let next = drain(&session)
            var loadAfter: Int64?
            if !loading, let after = nextLoad(&session) {
                loading = true
                loadAfter = after
            }
            return .acknowledged(outgoing, ackedThrough: moved, then: next, loadAfter: loadAfter)
        case .subscribe(let subscribe):
            let own = ["herald/\(session.registrationID)/push", "herald/\(session.registrationID)/#"]
            let codes = subscribe.subscriptions.map { subscription -> MQTTPacket.SubAck.ReturnCode in
                guard own.contains(subscription.topicFilter) else { return .failure }
                return subscription.qos == .atMostOnce ? .grantedQoS0 : .grantedQoS1
            }
            return .send([.subAck(.init(packetID: subscribe.packetID, returnCodes: codes))])
        case .unsubscribe(let unsubscribe):
            return .send([.unsubAck(packetID: unsubscribe.packetID)])
        case .publish(let publish):
            guard publish.topic == "herald/\(session.registrationID)/events" else { return closeNow(.protocolViolation) }
            switch publish.qos {
            case .atMostOnce: return .deviceEvent(publish.payload, reply: nil)
            case .atLeastOnce: return .deviceEvent(publish.payload, reply: .pubAck(packetID: publish.packetID ?? 0))
            case .exactlyOnce: return closeNow(.unsupportedQoS)
            }
        case .pubRec, .pubRel, .pubComp:
            return closeNow(.unsupportedQoS)
        case .connect, .connAck, .subAck, .unsubAck, .pingResp:
            return closeNow(.protocolViolation)
        }
    }

    // MARK: Events from Herald

    mutating func authenticated(_ result: AuthResult) -> Action {
        guard case .authenticating = state else { return .none }
        switch result {
        case .accepted(let device):
            state = .replaying(Session(registrationID: device.registrationID))
            return .acceptSession(registrationID: device.registrationID)
        case .refused(let code):
            state = .closed
            return .sendAndClose(.connAck(.init(returnCode: code)), .authenticationFailed)
        }
    }

    /// A page of the inbox was loaded (`complete`: it reached the device's latest seq):
    /// send it, then what arrived meanwhile, in order. Loaded messages this connection
    /// already had acknowledged (the store hears of acks in batches) are not sent again.
    mutating func replayLoaded(_ messages: [Outgoing], through: Int64, complete: Bool) -> Action {
        guard phase == .replaying else { return .none }
        var session = takeSession()
        for message in messages where message.seq.map({ $0 > session.ackedThrough }) ?? true {
            enqueue(message, into: &session)
        }
        session.knownThrough = max(session.knownThrough, through)
        if !complete { session.storeAhead = true }
        let held = session.heldBack
        session.heldBack = []
        for message in held where message.seq.map({ $0 > session.ackedThrough }) ?? true {
            // One that can't be queued is in the store: a later page brings it.
            if !takeInOrder(message, &session) { session.storeAhead = true }
        }
        // Stored messages are queued within bounds (a page, the held-back ones), so the
        // queue's limit, for unstored ones, isn't checked here.
        let packets = drain(&session)
        if let after = nextLoad(&session) {
            state = .replaying(session)
            return .loadInbox(after: after, sendFirst: packets)
        }
        state = .active(session)
        return packets.isEmpty ? .none : .send(packets)
    }

    /// Queues a live message unless its seq skips one or the queue has no room for another
    /// stored message; false when it is left to the store.
    private func takeInOrder(_ message: Outgoing, _ session: inout Session) -> Bool {
        if let seq = message.seq {
            guard seq <= session.knownThrough || (seq == session.knownThrough + 1 && session.queue.count < maxQueued) else {
                return false
            }
            session.knownThrough = max(session.knownThrough, seq)
        }
        enqueue(message, into: &session)
        return true
    }

    /// Where the next inbox load starts, if the store holds more and fewer than a window's
    /// worth are queued (the window stays full while the page loads). The caller moves to
    /// `.replaying`.
    private func nextLoad(_ session: inout Session) -> Int64? {
        guard session.storeAhead, session.queue.count < maxInFlight else { return nil }
        session.storeAhead = false
        return session.knownThrough
    }

    /// A live message for this device.
    mutating func deliver(_ message: Outgoing) -> Action {
        switch phase {
        case .replaying:
            var session = takeSession()
            if message.seq != nil {
                // Held for the load under way, within bounds; past them, left to the store.
                if session.heldBack.count < maxInFlight {
                    session.heldBack.append(message)
                } else {
                    session.storeAhead = true
                }
                state = .replaying(session)
                return .none
            }
            return deliverNow(message, &session, replaying: true)
        case .active:
            var session = takeSession()
            if let seq = message.seq, seq <= session.ackedThrough {
                state = .active(session)
                return .alreadyAcknowledged(message)
            }
            guard takeInOrder(message, &session) else {
                // The next load brings it (it was stored before it was handed over); held
                // meanwhile, within bounds, in case that load was cut short.
                if session.heldBack.count < maxInFlight { session.heldBack.append(message) }
                session.storeAhead = true
                if let after = nextLoad(&session) {
                    state = .replaying(session)
                    return .loadInbox(after: after, sendFirst: [])
                }
                state = .active(session)
                return .none
            }
            return sendQueued(&session, replaying: false)
        default:
            return .none
        }
    }

    /// A message without a seq while the inbox loads: it needs no place in the order.
    private mutating func deliverNow(_ message: Outgoing, _ session: inout Session, replaying: Bool) -> Action {
        enqueue(message, into: &session)
        return sendQueued(&session, replaying: replaying)
    }

    /// Sends what the in-flight window allows of the queue, or closes a connection whose
    /// queue outgrew its bound.
    private mutating func sendQueued(_ session: inout Session, replaying: Bool) -> Action {
        if session.queue.count > maxQueued { return closeNow(.slowConsumer) }
        let packets = drain(&session)
        state = replaying ? .replaying(session) : .active(session)
        return packets.isEmpty ? .none : .send(packets)
    }

    /// Another node stored messages in the device's inbox (a recall command): they are
    /// loaded as the window allows; a load under way may have read before them, so it is
    /// followed by another.
    mutating func storeChanged() -> Action {
        switch phase {
        case .replaying:
            var session = takeSession()
            session.storeAhead = true
            state = .replaying(session)
            return .none
        case .active:
            var session = takeSession()
            session.storeAhead = true
            if let after = nextLoad(&session) {
                state = .replaying(session)
                return .loadInbox(after: after, sendFirst: [])
            }
            state = .active(session)
            return .none
        default:
            return .none
        }
    }

    /// Sends queued messages the in-flight window allows (after the channel became writable again).
    mutating func resume() -> Action {
        guard phase == .active else { return .none }
        var session = takeSession()
        let packets = drain(&session)
        if let after = nextLoad(&session) {
            state = .replaying(session)
            return .loadInbox(after: after, sendFirst: packets)
        }
        state = .active(session)
        return packets.isEmpty ? .none : .send(packets)
    }

    mutating func close(_ reason: CloseReason) -> Action {
        guard isOpen else { return .none }
        return closeNow(reason)
    }

    private mutating func closeNow(_ reason: CloseReason) -> Action {
        state = .closed
        return .close(reason)
    }

    private func enqueue(_ message: Outgoing, into session: inout Session) {
        if let seq = message.seq {
            guard session.pendingSeqs.insert(seq).inserted else { return }
        }
        session.queue.append(message)
    }

    private mutating func drain(_ session: inout Session) -> [MQTTPacket] {
        var packets: [MQTTPacket] = []
        while session.inFlight.count < maxInFlight, let message = session.queue.popFirst() {
            var packetID = session.nextPacketID
            while session.inFlight[packetID] != nil { packetID = packetID == .max ? 1 : packetID + 1 }
            session.nextPacketID = packetID == .max ? 1 : packetID + 1
            session.inFlight[packetID] = message
            session.inFlightOrder.append(packetID)
            if let seq = message.seq {
                sentThrough = max(sentThrough, seq)
                // Usually the highest yet; otherwise it goes in its place.
                var index = session.sentSeqs.endIndex
                while index > session.sentSeqs.startIndex, session.sentSeqs[index - 1] > seq { index -= 1 }
                session.sentSeqs.insert(seq, at: index)
            }
            packets.append(
                .publish(
                    .init(
                        topic: "herald/\(session.registrationID)/push",
                        payload: message.payload,
                        qos: .atLeastOnce,
                        packetID: packetID,
                        retain: false,
                        dup: message.dup
                    )
                )
            )
        }
        return packets
    }
}
