import DequeModule

extension MQTTSessionStateMachine {
    /// A connected device's session: its in-flight window, its queue, and how far its
    /// inbox is known, sent and acknowledged on this connection.
    struct Session {
        var registrationID: String
        var inFlight: [UInt16: Outgoing] = [:]
        /// Packet ids in the order their messages were sent.
        var inFlightOrder: Deque<UInt16> = []
        var queue: Deque<Outgoing> = []
        var heldBack: [Outgoing] = []
        var nextPacketID: UInt16 = 1
        /// Inbox seqs queued or sent on this connection and not yet acknowledged through:
        /// a second copy of one of them (an inbox load and a live send) is dropped.
        var pendingSeqs: Set<Int64> = []
        /// Highest inbox seq acknowledged in order on this connection.
        var ackedThrough: Int64 = 0
        /// Seqs acknowledged out of order, waiting for the gap below them to close.
        var ackedAhead: Set<Int64> = []
        /// Seqs sent and not yet acknowledged through, ascending: "acknowledged through"
        /// only moves past a seq once every lower seq sent here is acknowledged (a safety
        /// net: seqs go out in order, but a live copy of one an inbox load no longer had,
        /// expired or recalled meanwhile, still goes out after higher ones).
        var sentSeqs: Deque<Int64> = []
        /// Every seq up to this one was loaded from the inbox or came live: a live message
        /// above the next one waits for a load.
        var knownThrough: Int64 = 0
        /// The store holds seqs above `knownThrough` that this connection hasn't queued: a
        /// load stopped at its page size, or live messages were left to the store.
        var storeAhead = false
    }
}

extension MQTTSessionStateMachine {
    /// Messages never acknowledged on this connection (their senders learn "no ack").
    mutating func unacknowledged() -> [Outgoing] {
        switch state {
        case .replaying(let session), .active(let session):
            return Array(session.inFlightOrder.compactMap { session.inFlight[$0] }) + Array(session.queue) + session.heldBack
        default:
            return []
        }
    }
}
