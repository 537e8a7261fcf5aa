import NIOCore

/// A connection parked without a channel (``ParkingLot``): its socket, and what its
/// handler needs to carry on where it stopped. Nothing in it is allocated on its own.
struct ParkedConnection: Sendable {
    /// The socket, the lot's own descriptor of it.
    let fd: Int32
    /// The index of the connection's event loop in ``ParkingLot/loops``.
    let loop: UInt16
    let connectionID: UInt64
    let deviceID: Int64
    let appID: Int64
    let key: RegistrationKey
    /// The epoch of the device's session the connection holds.
    let epoch: Int64
    let replayDUPThrough: Int64
    let session: MQTTSessionStateMachine.ParkedSession
    /// The keepalive: the silence after which the connection is closed, in nanoseconds.
    let silenceLimit: Int64
    /// ``NIODeadline/uptimeNanoseconds`` when the device was last heard.
    private(set) var lastHeard: UInt64

    init(
        fd: Int32,
        loop: UInt16,
        connectionID: UInt64,
        deviceID: Int64,
        appID: Int64,
        key: RegistrationKey,
        epoch: Int64,
        replayDUPThrough: Int64,
        session: MQTTSessionStateMachine.ParkedSession,
        keepalive: (silenceLimit: TimeAmount, lastHeard: NIODeadline)
    ) {
        self.fd = fd
        self.loop = loop
        self.connectionID = connectionID
        self.deviceID = deviceID
        self.appID = appID
        self.key = key
        self.epoch = epoch
        self.replayDUPThrough = replayDUPThrough
        self.session = session
        self.silenceLimit = keepalive.silenceLimit.nanoseconds
        self.lastHeard = keepalive.lastHeard.uptimeNanoseconds
    }

    /// A PINGREQ came (the lot answered it).
    mutating func heard(at now: NIODeadline) {
        lastHeard = now.uptimeNanoseconds
    }

    /// Whether nothing was heard for longer than the keepalive at `now`.
    func isSilent(at now: NIODeadline) -> Bool {
        now.uptimeNanoseconds > lastHeard && Int64(now.uptimeNanoseconds - lastHeard) > silenceLimit
    }

    var keepalive: (silenceLimit: TimeAmount, lastHeard: NIODeadline) {
        (.nanoseconds(silenceLimit), .uptimeNanoseconds(lastHeard))
    }
}
