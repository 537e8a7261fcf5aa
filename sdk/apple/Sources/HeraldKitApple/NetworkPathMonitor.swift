#if canImport(UserNotifications) && canImport(Network)
import Dispatch
import HeraldKit
import NIOConcurrencyHelpers
import Network

/// Tells a ``HeraldClient`` when the network comes, goes or changes path (Wi-Fi to
/// cellular), from an `NWPathMonitor`: a wait to reconnect ends at once, a connection on
/// the old path is replaced.
public final class NetworkPathMonitor {
    private let monitor = NWPathMonitor()

    public init(client: HeraldClient, queue: DispatchQueue = DispatchQueue(label: "herald.network-path")) {
        let last = NIOLockedValueBox<PathSummary?>(nil)
        monitor.pathUpdateHandler = { path in
            let now = PathSummary(path)
            let before = last.withLockedValue { last in
                defer { last = now }
                return last
            }
            // The monitor first reports the path as it is; the client starts assuming a
            // network, so that first report matters only when there is none.
            guard now != before, before != nil || !now.available else { return }
            client.networkChanged(available: now.available)
        }
        monitor.start(queue: queue)
    }

    /// Stops monitoring (also done when this is released).
    public func cancel() {
        monitor.cancel()
    }

    deinit {
        monitor.cancel()
    }
}

/// What of a path matters to the connection: whether there is one, and over what.
struct PathSummary: Equatable, Sendable {
    var available: Bool
    var interfaces: [Bool]

    init(_ path: NWPath) {
        available = path.status == .satisfied
        interfaces = [NWInterface.InterfaceType.wifi, .cellular, .wiredEthernet].map(path.usesInterfaceType)
    }
}
#endif
