import NIOConcurrencyHelpers
import NIOCore

/// A live, authenticated connection, reachable from any thread: on its channel (its
/// handler) or parked without one (its slot in the ``ParkingLot``). One is kept per device
/// connected here. The connection's id stays the same when it is parked and brought back.
struct ConnectionHandle: @unchecked Sendable {
    /// Where the connection is. The handler is only touched on ``eventLoop``.
    enum Target {
        case live(MQTTConnectionHandler)
        case parked(ParkingLot.Ticket)
    }

    let id: UInt64
    let deviceID: Int64
    let eventLoop: any EventLoop
    private(set) var target: Target
    /// The epoch of the device's session once the connection has claimed it, else 0 (an
    /// epoch is positive).
    private var claimedEpoch: Int64 = 0

    init(id: UInt64, deviceID: Int64, eventLoop: any EventLoop, target: Target, epoch: Int64? = nil) {
        self.id = id
        self.deviceID = deviceID
        self.eventLoop = eventLoop
        self.target = target
        self.claimedEpoch = epoch ?? 0
    }

    /// The epoch of the device's session, once the connection has claimed it.
    var epoch: Int64? {
        get { claimedEpoch == 0 ? nil : claimedEpoch }
        set { claimedEpoch = newValue ?? 0 }
    }

    fileprivate mutating func move(to target: Target) { self.target = target }
}

/// Which device holds which connection on this node. A new connection for a device
/// takes over: the registry hands back the one it replaced so it can be closed.
final class ConnectionRegistry: Sendable {
    private let connections = NIOLockedValueBox([RegistrationKey: ConnectionHandle]())

    /// Registers `handle`; returns the connection it replaces, if any.
    func register(_ registrationID: String, _ handle: ConnectionHandle) -> ConnectionHandle? {
        let key = RegistrationKey(registrationID)
        return connections.withLockedValue { connections in
            let previous = connections[key]
            connections[key] = handle
            return previous
        }
    }

    /// Removes the entry, unless another connection has taken over since.
    func remove(_ registrationID: String, id: UInt64) {
        let key = RegistrationKey(registrationID)
        connections.withLockedValue { connections in
            if connections[key]?.id == id { connections[key] = nil }
        }
    }

    /// The connection `id` moved (parked, or brought back to a channel); false if it is
    /// no longer the device's connection here.
    @discardableResult
    func move(_ key: RegistrationKey, id: UInt64, to target: ConnectionHandle.Target) -> Bool {
        connections.withLockedValue { connections in
            guard connections[key]?.id == id else { return false }
            connections[key]?.move(to: target)
            return true
        }
    }

    /// Notes the epoch the connection `id` claimed for its device (or was handed: the
    /// highest is kept).
    func claimed(_ registrationID: String, id: UInt64, epoch: Int64) {
        let key = RegistrationKey(registrationID)
        connections.withLockedValue { connections in
            guard let current = connections[key], current.id == id else { return }
            connections[key]?.epoch = max(current.epoch ?? 0, epoch)
        }
    }

    func connection(_ registrationID: String) -> ConnectionHandle? {
        connection(RegistrationKey(registrationID))
    }

    func connection(_ key: RegistrationKey) -> ConnectionHandle? {
        connections.withLockedValue { $0[key] }
    }

    /// The connections of many devices, in their order, under one acquisition of the lock.
    func connections(_ keys: [RegistrationKey]) -> [ConnectionHandle?] {
        connections.withLockedValue { connections in keys.map { connections[$0] } }
    }

    var count: Int { connections.withLockedValue { $0.count } }

    func all() -> [(key: RegistrationKey, handle: ConnectionHandle)] {
        connections.withLockedValue { $0.map { ($0.key, $0.value) } }
    }
}
