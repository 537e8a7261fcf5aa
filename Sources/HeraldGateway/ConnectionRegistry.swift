import NIOConcurrencyHelpers
import NIOCore

/// A live, authenticated connection, reachable from any thread. One is kept per device
/// connected here, so it holds what no other field can give: 48 bytes.
struct ConnectionHandle: Sendable {
    let id: ObjectIdentifier
    let deviceID: Int64
    let handler: NIOLoopBound<MQTTConnectionHandler>
    /// The epoch of the device's session once the connection has claimed it, else 0 (an
    /// epoch is positive).
    private var claimedEpoch: Int64 = 0

    init(handler: MQTTConnectionHandler, deviceID: Int64, eventLoop: any EventLoop) {
        id = ObjectIdentifier(handler)
        self.deviceID = deviceID
        self.handler = NIOLoopBound(handler, eventLoop: eventLoop)
    }

    var eventLoop: any EventLoop { handler.eventLoop }

    /// The epoch of the device's session, once the connection has claimed it.
    var epoch: Int64? {
        get { claimedEpoch == 0 ? nil : claimedEpoch }
        set { claimedEpoch = newValue ?? 0 }
    }
}

/// Which device holds which connection on this node. A new connection for a device
/// takes over: the registry hands back the one it replaced so it can be closed.
final class ConnectionRegistry: Sendable {
    private let connections = NIOLockedValueBox([String: ConnectionHandle]())

    /// Registers `handle`; returns the connection it replaces, if any.
    func register(_ registrationID: String, _ handle: ConnectionHandle) -> ConnectionHandle? {
        connections.withLockedValue { connections in
            let previous = connections[registrationID]
            connections[registrationID] = handle
            return previous
        }
    }

    /// Removes the entry, unless another connection has taken over since.
    func remove(_ registrationID: String, id: ObjectIdentifier) {
        connections.withLockedValue { connections in
            if connections[registrationID]?.id == id { connections[registrationID] = nil }
        }
    }

    /// Notes the epoch the connection `id` claimed for its device (or was handed: the
    /// highest is kept).
    func claimed(_ registrationID: String, id: ObjectIdentifier, epoch: Int64) {
        connections.withLockedValue { connections in
            guard let current = connections[registrationID], current.id == id else { return }
            connections[registrationID]?.epoch = max(current.epoch ?? 0, epoch)
        }
    }

    func connection(_ registrationID: String) -> ConnectionHandle? {
        connections.withLockedValue { $0[registrationID] }
    }

    /// The connections of many devices, in their order, under one acquisition of the lock.
    func connections(_ registrationIDs: some Sequence<String>) -> [ConnectionHandle?] {
        connections.withLockedValue { connections in registrationIDs.map { connections[$0] } }
    }

    var count: Int { connections.withLockedValue { $0.count } }

    func all() -> [ConnectionHandle] { connections.withLockedValue { Array($0.values) } }
}
