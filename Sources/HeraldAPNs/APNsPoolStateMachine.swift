import Foundation

/// Which connection a request goes on, and when a waiting request may go: a value type
/// that returns actions, so the pool's rules are testable without sockets.
struct APNsPoolStateMachine: Sendable {
    typealias ConnectionID = Int
    typealias WaiterID = Int

    struct Connection: Sendable {
        var tokenAuth: Bool
        /// The peer's SETTINGS_MAX_CONCURRENT_STREAMS (1 until the first SETTINGS).
        var peerMaxStreams = 1
        var succeeded = false
        var draining = false
        var inFlight = 0
        var token: APNsProviderToken?
        var tokenAdoptedAt: Date?

        /// Streams this connection may carry now: one until the first success on a token connection.
        func capacity(cap: Int) -> Int {
            if tokenAuth && !succeeded { return 1 }
            return min(peerMaxStreams, cap)
        }
    }

    enum Action: Sendable, Hashable {
        /// Hand this connection to the waiter (a stream on it is already counted).
        case resume(WaiterID, ConnectionID)
        /// Close the connection: it drained.
        case close(ConnectionID)
        /// The waiter can't be served: the pool is shutting down.
        case failShutdown(WaiterID)
        /// The waiter can't be served: APNs refused the credentials.
        case failRefused(WaiterID)
    }

    enum LeaseResult: Sendable, Hashable {
        case leased(ConnectionID)
        case wait
        case shutdown
        /// APNs refused the credentials: nothing more is sent.
        case refused
    }

    /// Upper bound on streams per connection, whatever the peer allows.
    let streamCap: Int
    private(set) var connections: [ConnectionID: Connection] = [:]
    private var waiters: [(id: WaiterID, avoiding: ConnectionID?)] = []
    private var shuttingDown = false
    private var refusing = false

    init(streamCap: Int) {
        self.streamCap = streamCap
    }

    /// Holds a machine's place while it is mutated outside its storage (no allocation).
    static let placeholder = APNsPoolStateMachine(streamCap: 0)

    var inFlight: Int { connections.values.reduce(0) { $0 + $1.inFlight } }
    var waiting: Int { waiters.count }

    /// Takes a stream on the least loaded usable connection, preferring one other than `avoiding`.
    mutating func lease(_ waiter: WaiterID, avoiding: ConnectionID? = nil) -> LeaseResult {
        if shuttingDown { return .shutdown }
        if refusing { return .refused }
        if waiters.isEmpty, let id = pick(avoiding: avoiding) {
            connections[id]!.inFlight += 1
            return .leased(id)
        }
        waiters.append((waiter, avoiding))
        return .wait
    }

    /// The waiter gave up (deadline or cancellation); true if it was still waiting.
    mutating func cancel(_ waiter: WaiterID) -> Bool {
        guard let index = waiters.firstIndex(where: { $0.id == waiter }) else { return false }
        waiters.remove(at: index)
        return true
    }

    mutating func connectionReady(_ id: ConnectionID, tokenAuth: Bool) -> [Action] {
        connections[id] = Connection(tokenAuth: tokenAuth)
        return dispatch()
    }

    mutating func settingsReceived(_ id: ConnectionID, maxConcurrentStreams: Int) -> [Action] {
        connections[id]?.peerMaxStreams = maxConcurrentStreams
        return dispatch()
    }

    /// A stream finished; `succeeded` when APNs answered 200.
    mutating func release(_ id: ConnectionID, succeeded: Bool) -> [Action] {
        guard var connection = connections[id] else { return dispatch() }
        connection.inFlight -= 1
        if succeeded { connection.succeeded = true }
        connections[id] = connection
        var actions = [Action]()
        if connection.draining && connection.inFlight == 0 { actions.append(.close(id)) }
        return actions + dispatch()
    }

    /// Stop opening streams on the connection (GOAWAY, expired token, rotation); close it once empty.
    mutating func drain(_ id: ConnectionID) -> [Action] {
        guard var connection = connections[id], !connection.draining else { return [] }
        connection.draining = true
        connections[id] = connection
        return connection.inFlight == 0 ? [.close(id)] : []
    }

    mutating func connectionClosed(_ id: ConnectionID) -> [Action] {
        connections[id] = nil
        return dispatch()
    }

    mutating func shutdown() -> [Action] {
        shuttingDown = true
        defer { waiters.removeAll() }
        return waiters.map { .failShutdown($0.id) } + connections.keys.sorted().map { .close($0) }
    }

    /// APNs refused the credentials: every waiter fails, and so does every later lease.
    mutating func refuse() -> [Action] {
        refusing = true
        defer { waiters.removeAll() }
        return waiters.map { .failRefused($0.id) }
    }

    /// Which token a request on `id` carries; `.retire` also drains the connection.
    mutating func token(
        for id: ConnectionID,
        shared: APNsProviderToken,
        now: Date,
        policy: APNsTokenPolicy
    ) -> APNsTokenPolicy.ConnectionDecision {
        guard var connection = connections[id] else { return .use(shared) }
        let decision = policy.decide(connectionToken: connection.token, adoptedAt: connection.tokenAdoptedAt, shared: shared, now: now)
        if case .use(let token) = decision, token != connection.token {
            connection.token = token
            connection.tokenAdoptedAt = now
            connections[id] = connection
        }
        return decision
    }

    /// The usable connection with the fewest streams in flight (spreading load), not `avoiding` if possible.
    private func pick(avoiding: ConnectionID?) -> ConnectionID? {
        var best: (id: ConnectionID, inFlight: Int, avoided: Bool)?
        for (id, connection) in connections where !connection.draining {
            guard connection.capacity(cap: streamCap) > connection.inFlight else { continue }
            let candidate = (id: id, inFlight: connection.inFlight, avoided: id == avoiding)
            guard let current = best else {
                best = candidate
                continue
            }
            if (candidate.avoided ? 1 : 0, candidate.inFlight, candidate.id) < (current.avoided ? 1 : 0, current.inFlight, current.id) {
                best = candidate
            }
        }
        return best?.id
    }

    private mutating func dispatch() -> [Action] {
        var actions = [Action]()
        while let first = waiters.first, let id = pick(avoiding: first.avoiding) {
            waiters.removeFirst()
            connections[id]!.inFlight += 1
            actions.append(.resume(first.id, id))
        }
        return actions
    }
}
