/// What a node knows of its link to the database, read from its heartbeats: whether it may
/// declare other nodes dead, and whether it should ask its peers if it is the one cut off.
///
/// Two faults look the same from a node whose heartbeats fail: the database is down for
/// everyone, or only this node's link to it is cut. In the first, its devices have nowhere
/// better to go, and closing their connections would only make a reconnect storm when the
/// database comes back. In the second, its peers declare it dead after
/// ``ClusterConfiguration/deadAfter`` and treat its devices as offline while they stay
/// connected here, getting nothing. So once the heartbeats have failed for that long, the
/// node asks its peers (directly, not through the database); if one of them reaches the
/// database, this node lets its devices go and refuses new ones until it is back.
///
/// Declaring another node dead takes the same care the other way: a node sweeps only once
/// its own heartbeats have gone through for `deadAfter` without a gap, so after an outage
/// of the whole cluster the first node back doesn't declare every other one dead before
/// they could heartbeat again.
struct DatabaseContact: Sendable {
    typealias Instant = ContinuousClock.Instant

    let deadAfter: Duration
    /// Since when the heartbeats have gone through without a gap longer than half of
    /// `deadAfter`; nil before the first.
    private(set) var continuousSince: Instant?
    /// When the last heartbeat went through.
    private(set) var lastContact: Instant?
    /// The node let its devices go: a peer reaches the database it cannot.
    private(set) var cutOff = false

    init(deadAfter: Duration) {
        self.deadAfter = deadAfter
    }

    /// A heartbeat (or the registration) went through at `now`. True when the node was cut
    /// off until now: it takes devices again.
    mutating func reached(at now: Instant) -> Bool {
        let continuous = lastContact.map { now - $0 <= deadAfter / 2 } ?? false
        if !continuous { continuousSince = now }
        lastContact = now
        defer { cutOff = false }
        return cutOff
    }

    /// Whether the node may declare nodes dead whose heartbeats are older than `deadAfter`:
    /// its own went through for at least that long, so theirs could have too.
    func maySweep(at now: Instant) -> Bool {
        guard let continuousSince else { return false }
        return now - continuousSince >= deadAfter
    }

    /// Whether to ask the peers if they reach the database: the node hasn't for longer
    /// than a peer waits before declaring it dead, and hasn't let its devices go yet.
    func shouldAskPeers(at now: Instant) -> Bool {
        guard !cutOff, let lastContact else { return false }
        return now - lastContact > deadAfter
    }

    /// A peer reaches the database this node can't: it lets its devices go.
    mutating func peerReachesIt() {
        cutOff = true
    }
}
