/// Whether requests go to an APNs endpoint that keeps answering 5xx: a value type that
/// returns decisions, so its rules are testable with an injected clock and no sockets.
///
/// Closed, every request goes. After ``Configuration/failureThreshold`` 5xx answers in a
/// row the circuit opens for a backoff (doubling with each opening up to a maximum, less a
/// random part so the clients of many apps don't probe in step). While open, requests
/// are refused without being sent. Once the backoff ran out, one request goes as a probe
/// (half open): an answer other than 5xx closes the circuit, a 5xx or no answer opens it
/// again for longer.
public struct APNsCircuitBreaker: Sendable {
    public typealias Instant = ContinuousClock.Instant

    /// When the circuit opens and how long it stays open.
    public struct Configuration: Sendable, Hashable {
        /// 5xx answers in a row that open the circuit.
        public var failureThreshold: Int = 3
        /// The first opening's length; each opening after a failed probe doubles it.
        public var minimumOpen: Duration = .seconds(1)
        /// The longest opening.
        public var maximumOpen: Duration = .seconds(60)
        /// Up to this fraction of an opening is taken off at random (0 to 1).
        public var jitter: Double = 0.2

        public init() {}
    }

    /// What to do with a request.
    public enum Decision: Sendable, Hashable {
        /// Send it.
        case send
        /// Send it as the probe that decides whether the circuit closes.
        case probe
        /// Don't send it: the endpoint is failing. Try again after `after`.
        case refuse(reason: APNsReason, after: Duration)
    }

    private enum State: Sendable, Hashable {
        case closed(failures: Int)
        case open(until: Instant)
        case halfOpen(probeSince: Instant)
    }

    public let configuration: Configuration
    /// How long a probe may go unanswered before another one goes.
    private let probeTimeout: Duration
    private var state: State = .closed(failures: 0)
    /// Openings since the circuit was last closed.
    private var openings = 0
    /// The reason of the last 5xx, given with refusals.
    private var lastReason: APNsReason = .serviceUnavailable

    /// - Parameter probeTimeout: after this long without word of the probe, another goes.
    public init(configuration: Configuration = Configuration(), probeTimeout: Duration) {
        self.configuration = configuration
        self.probeTimeout = probeTimeout
    }

    /// Whether the circuit is open or half open (requests are being refused).
    public var isOpen: Bool {
        if case .closed = state { return false }
        return true
    }

    /// How long until a request may go again (the rest of the opening; nothing when closed).
    public func retryAfter(now: Instant) -> Duration {
        switch state {
        case .closed: .zero
        case .open(let until): max(until - now, .zero)
        case .halfOpen: configuration.minimumOpen
        }
    }

    /// Why and for how long a request that was admitted earlier (and waited for a stream)
    /// must not go now after all: nil while the circuit is closed.
    public func refusal(now: Instant) -> (reason: APNsReason, after: Duration)? {
        isOpen ? (lastReason, retryAfter(now: now)) : nil
    }

    /// Decides a request made at `now`.
    public mutating func admit(now: Instant) -> Decision {
        switch state {
        case .closed:
            return .send
        case .open(let until) where now < until:
            return .refuse(reason: lastReason, after: until - now)
        case .open:
            state = .halfOpen(probeSince: now)
            return .probe
        case .halfOpen(let since) where now - since >= probeTimeout:
            state = .halfOpen(probeSince: now)
            return .probe
        case .halfOpen:
            return .refuse(reason: lastReason, after: configuration.minimumOpen)
        }
    }

    /// APNs answered something other than a 5xx: it is up.
    public mutating func succeeded() {
        state = .closed(failures: 0)
        openings = 0
    }

    /// APNs answered with a 5xx (`probe`: the request was the probe). `random` in 0..<1
    /// picks the jitter. Returns whether the circuit is open now.
    @discardableResult
    public mutating func failed(reason: APNsReason, probe: Bool, now: Instant, random: Double) -> Bool {
        lastReason = reason
        switch state {
        case .closed(let failures):
            if failures + 1 >= configuration.failureThreshold {
                open(now: now, random: random)
            } else {
                state = .closed(failures: failures + 1)
            }
        case .halfOpen where probe:
            open(now: now, random: random)
        case .open, .halfOpen:
            break  // answers to requests sent before it opened change nothing
        }
        return isOpen
    }

    /// The probe got no answer (deadline, lost connection): the endpoint is still failing.
    public mutating func probeUnanswered(now: Instant, random: Double) {
        guard case .halfOpen = state else { return }
        open(now: now, random: random)
    }

    private mutating func open(now: Instant, random: Double) {
        openings += 1
        let doubled = configuration.minimumOpen * (1 << min(openings - 1, 20))
        let length = min(doubled, configuration.maximumOpen)
        let jitter = min(max(configuration.jitter, 0), 1) * min(max(random, 0), 1)
        state = .open(until: now + length * (1 - jitter))
    }
}
