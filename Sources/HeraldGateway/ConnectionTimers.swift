import NIOCore

/// The time rules of one device connection: the CONNECT timeout, the credentials check's
/// time limit, the keepalive and the slow-consumer rule.
///
/// A value type without a clock of its own: the connection tells it when things happened
/// and asks what has expired at the instant it passes, so tests drive it with made-up
/// instants instead of sleeping. The limits come from the gateway's configuration at each
/// call rather than being copied into every connection (memory per idle connection is
/// measured).
struct ConnectionTimers {
    /// What is past its time at an instant.
    enum Expiry: Equatable {
        /// The credentials check took longer than ``GatewayConfiguration/authTimeout`` (the
        /// database doesn't answer): the device gets CONNACK 3, server unavailable.
        case authenticationTimedOut
        /// The connection is to be closed, for this reason.
        case close(MQTTSessionStateMachine.CloseReason)
    }

    /// The silence after which the connection is closed: the CONNECT timeout, then the
    /// keepalive the CONNECT asked for, as enforced.
    private var silenceLimit: TimeAmount
    private var lastHeard: NIODeadline
    /// When the device last sent more than a PINGREQ (``NIODeadline/uptimeNanoseconds``):
    /// a device pinging more often than ``GatewayConfiguration/parkAfter`` is idle all the
    /// same, and is parked.
    private var lastActiveTime: UInt64
    /// When the whole CONNECT must have arrived, counted from the connection's start (a
    /// CONNECT trickled a byte at a time never falls silent for the timeout); nil once it has.
    private var connectDeadline: NIODeadline? {
        get { Self.instant(connectDeadlineTime) }
        set { connectDeadlineTime = Self.time(newValue) }
    }
    private var unwritableSince: NIODeadline? {
        get { Self.instant(unwritableSinceTime) }
        set { unwritableSinceTime = Self.time(newValue) }
    }
    /// When the credentials check under way began.
    private var authenticationStart: NIODeadline? {
        get { Self.instant(authenticationStartTime) }
        set { authenticationStartTime = Self.time(newValue) }
    }
    // The optional instants above, stored as their uptime in nanoseconds with 0 for none:
    // 8 bytes each instead of an optional's 16 (every connection holds them).
    private var connectDeadlineTime: UInt64 = 0
    private var unwritableSinceTime: UInt64 = 0
    private var authenticationStartTime: UInt64 = 0

    private static func instant(_ time: UInt64) -> NIODeadline? {
        time == 0 ? nil : .uptimeNanoseconds(time)
    }

    private static func time(_ instant: NIODeadline?) -> UInt64 {
        guard let instant else { return 0 }
        return max(1, instant.uptimeNanoseconds)
    }

    /// The timers of a connection that opened at `now`.
    init(openedAt now: NIODeadline, configuration: GatewayConfiguration) {
        silenceLimit = TimeAmount(configuration.connectTimeout)
        lastHeard = now
        lastActiveTime = now.uptimeNanoseconds
        connectDeadline = now + TimeAmount(configuration.connectTimeout)
    }

    /// The timers of a connection brought back from the parking lot: its keepalive as it
    /// was (nothing else is under way in a parked connection).
    init(silenceLimit: TimeAmount, lastHeard: NIODeadline) {
        self.silenceLimit = silenceLimit
        self.lastHeard = lastHeard
        self.lastActiveTime = NIODeadline.now().uptimeNanoseconds
    }

    /// The keepalive, as a parked connection keeps it.
    var keepalive: (silenceLimit: TimeAmount, lastHeard: NIODeadline) { (silenceLimit, lastHeard) }

    /// Whether nothing was heard for `quiet` at `now` and nothing timed is under way (the
    /// CONNECT, a credentials check, a full outbound buffer).
    func isQuiet(at now: NIODeadline, for quiet: TimeAmount) -> Bool {
        connectDeadlineTime == 0 && authenticationStartTime == 0 && unwritableSinceTime == 0
            && now.uptimeNanoseconds >= lastActiveTime && Int64(now.uptimeNanoseconds - lastActiveTime) >= quiet.nanoseconds
    }

    /// The device sent a packet other than PINGREQ.
    mutating func active(at now: NIODeadline) {
        lastActiveTime = now.uptimeNanoseconds
    }

    /// Bytes arrived from the device.
    mutating func heard(at now: NIODeadline) {
        lastHeard = now
    }

    /// The CONNECT arrived, asking for `keepAlive` seconds: the CONNECT timeout no longer
    /// applies, the keepalive does (see ``GatewayConfiguration/keepAliveDeadline(clientKeepAlive:)``).
    mutating func connectReceived(keepAlive: UInt16, configuration: GatewayConfiguration) {
        connectDeadline = nil
        silenceLimit = TimeAmount(configuration.keepAliveDeadline(clientKeepAlive: keepAlive))
    }

    /// The credentials check began.
    mutating func authenticationStarted(at now: NIODeadline) {
        authenticationStart = now
    }

    /// The credentials check ended (answered, or timed out).
    mutating func authenticationEnded() {
        authenticationStart = nil
    }

    /// The channel's outbound buffer filled; a connection already unwritable keeps the
    /// instant it became so.
    mutating func becameUnwritable(at now: NIODeadline) {
        if unwritableSince == nil { unwritableSince = now }
    }

    /// The channel's outbound buffer drained: the slow-consumer rule starts again.
    mutating func becameWritable() {
        unwritableSince = nil
    }

    /// What is past its time at `now`, if anything; the first that applies of: the
    /// credentials check, the CONNECT timeout, the silence limit and the slow-consumer
    /// timeout. Each is past only once its limit is exceeded, not when it is reached.
    /// `sessionAccepted` tells a silent device (keepalive expired) from a CONNECT that
    /// never led to a session (connect timeout).
    func expired(at now: NIODeadline, sessionAccepted: Bool, configuration: GatewayConfiguration) -> Expiry? {
        if let authenticationStart, now - authenticationStart > TimeAmount(configuration.authTimeout) {
            return .authenticationTimedOut
        }
        if let connectDeadline, now > connectDeadline {
            return .close(.connectTimeout)
        }
        if now - lastHeard > silenceLimit {
            return .close(sessionAccepted ? .keepaliveExpired : .connectTimeout)
        }
        if let unwritableSince, now - unwritableSince > TimeAmount(configuration.slowConsumerTimeout) {
            return .close(.slowConsumer)
        }
        return nil
    }
}
