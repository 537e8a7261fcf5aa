import HeraldMQTT

/// When the SDK holds its connection to the gateway: a value-type state machine fed the
/// app's state, the network's, and how each connection attempt ended, returning what the
/// client does. No I/O and no clock: every rule is a table test.
///
/// - The connection is wanted while the app is in the foreground and a network is there.
///   In the background Apple suspends sockets, so the SDK closes its own and APNs takes
///   over until the app comes back.
/// - A lost connection is tried again after a jittered, growing delay (``Backoff``);
///   "server unavailable" (an outage) counts as lost.
/// - A network that changes (Wi-Fi to cellular, back online) ends any wait at once, and
///   replaces a connection that may be bound to the old path.
/// - A refusal that retrying can't cure (a wrong secret, an unknown app or device) stops
///   the client with a typed ``HeraldRefusal`` instead of retrying for ever.
public struct ConnectionPolicy: Sendable {
    /// Whether the app is on screen.
    public enum AppState: Sendable, Hashable {
        case foreground
        case background
    }

    /// What the client does next.
    public enum Action: Sendable, Hashable {
        case none
        /// Open connection `id` (reported back in ``connected(_:)`` / ``ended(_:_:)``).
        case connect(id: Int)
        /// Close the connection (and forget any wait).
        case disconnect
        /// Close the connection, then open connection `id` at once.
        case reconnect(id: Int)
        /// Wait `delay`, then call ``waited(_:)`` with `id`.
        case wait(Duration, id: Int)
        /// Stop for good: retrying can't help.
        case stop(HeraldRefusal)
    }

    /// How a connection ended.
    public enum Ending: Sendable, Hashable {
        /// Lost, or never made (no route, a timeout, a reset).
        case lost
        /// The gateway answered CONNECT with a refusal.
        case refused(MQTTPacket.ConnAck.ReturnCode)
    }

    private enum State: Sendable, Hashable {
        /// No connection, none wanted (or not started).
        case idle
        case connecting(id: Int)
        case connected(id: Int)
        /// Waiting to try again; `id` names the wait.
        case waiting(id: Int)
        case stopped(HeraldRefusal)
    }

    public let backoff: Backoff
    private var state: State = .idle
    private var appState: AppState
    private var networkAvailable = true
    /// Attempts since the last connection that was accepted.
    private var failures = 0
    private var nextID = 0

    public init(appState: AppState = .foreground, backoff: Backoff = Backoff()) {
        self.appState = appState
        self.backoff = backoff
    }

    /// Whether a connection is wanted now.
    public var wantsConnection: Bool { appState == .foreground && networkAvailable }

    /// The refusal that stopped the client, if one did.
    public var stoppedBy: HeraldRefusal? {
        if case .stopped(let refusal) = state { return refusal }
        return nil
    }

    /// The client starts.
    public mutating func start() -> Action {
        guard case .idle = state, wantsConnection else { return .none }
        return connect()
    }

    /// The app came to the foreground or went to the background.
    public mutating func appStateChanged(to newState: AppState) -> Action {
        appState = newState
        return settle()
    }

    /// The network became available (or changed path), or went away.
    public mutating func networkChanged(available: Bool) -> Action {
        let wasAvailable = networkAvailable
        networkAvailable = available
        guard available, wantsConnection else { return settle() }
        switch state {
        case .waiting:
            // Back online or on another path: no reason to wait out the backoff.
            failures = 0
            return connect()
        case .connected, .connecting:
            // The connection may be bound to the path that went away.
            guard wasAvailable else { return settle() }
            failures = 0
            nextID += 1
            state = .connecting(id: nextID)
            return .reconnect(id: nextID)
        case .idle:
            return connect()
        case .stopped:
            return .none
        }
    }

    /// Connection `id` was accepted.
    public mutating func connected(_ id: Int) -> Action {
        guard case .connecting(id) = state else { return .none }
        state = .connected(id: id)
        failures = 0
        return .none
    }

    /// Connection `id` ended.
    public mutating func ended(_ id: Int, _ ending: Ending) -> Action {
        switch state {
        case .connecting(id), .connected(id): break
        default: return .none  // one closed on purpose, or replaced
        }
        if case .refused(let code) = ending, let refusal = HeraldRefusal(code) {
            state = .stopped(refusal)
            return .stop(refusal)
        }
        guard wantsConnection else {
            state = .idle
            return .none
        }
        let delay = backoff.delay(attempt: failures)
        failures += 1
        nextID += 1
        state = .waiting(id: nextID)
        return .wait(delay, id: nextID)
    }

    /// Wait `id` is over.
    public mutating func waited(_ id: Int) -> Action {
        guard case .waiting(id) = state else { return .none }
        guard wantsConnection else {
            state = .idle
            return .none
        }
        return connect()
    }

    /// After the app or the network changed: open a connection if one is wanted and none
    /// is up or coming, close it if none is wanted.
    private mutating func settle() -> Action {
        switch state {
        case .stopped:
            return .none
        case .idle:
            return wantsConnection ? connect() : .none
        case .waiting:
            if wantsConnection { return .none }
            state = .idle
            return .disconnect
        case .connecting, .connected:
            if wantsConnection { return .none }
            state = .idle
            return .disconnect
        }
    }

    private mutating func connect() -> Action {
        nextID += 1
        state = .connecting(id: nextID)
        return .connect(id: nextID)
    }
}

extension HeraldRefusal {
    /// The refusal a CONNACK code means; nil for acceptance and "server unavailable" (an
    /// outage, which is retried).
    init?(_ code: MQTTPacket.ConnAck.ReturnCode) {
        switch code {
        case .accepted, .serverUnavailable: return nil
        case .badUsernameOrPassword: self = .badCredentials
        case .notAuthorized: self = .notAuthorized
        case .identifierRejected: self = .identifierRejected
        case .unacceptableProtocolVersion: self = .unacceptableProtocolVersion
        }
    }
}
