import Foundation
import HeraldCore
import HeraldStore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Synchronization

/// What every connection of a gateway shares: one instance, so a connection holds a
/// single reference to it rather than a copy of each field.
final class GatewayContext: Sendable {
    let configuration: GatewayConfiguration
    let store: GatewayStore
    let authenticator: DeviceAuthenticator
    let registry: ConnectionRegistry
    let acks: AckRecorder
    /// The cluster's record of which node holds each device.
    let sessions: SessionBook
    /// Work off the event loops, run by the gateway's `run()`.
    let tasks = GatewayTasks()
    let metrics: GatewayMetrics
    let sweepers: [ObjectIdentifier: LoopSweeper]
    /// The connections parked without a channel.
    let lot: ParkingLot
    private let connectionIDs = Atomic<UInt64>(0)
    let onDeviceEvent: @Sendable (DeviceIdentity, ByteBuffer) -> Void
    let logger: Logger
    /// Tells apart the waits for unstored messages (they have no seq).
    let tokens = NIOLockedValueBox<UInt64>(0)
    /// Failed CONNECTs, to delay the answers to further ones.
    let throttle: NIOLockedValueBox<ConnectThrottle<ContinuousClock.Instant>>
    /// The smallest message id made when this gateway started, and the time half of a
    /// legacy one: a message accepted before then may have been sent by a process that is
    /// gone (a crash loses the last "sent through" writes, and a job it left unfinished is
    /// routed again), so a copy of it, replayed or routed, carries DUP.
    let startedMsgIDFloor: [UInt8]
    let startedLegacyMsgIDTime: [UInt8]
    /// Set while the node is cut off from the database that its peers still reach
    /// (``Gateway/refuseSessions(_:)``): a CONNECT is answered "server unavailable" at once,
    /// so the device goes to a live node instead of waiting here.
    let refusesSessions = Atomic<Bool>(false)

    init(
        configuration: GatewayConfiguration,
        store: GatewayStore,
        authenticator: DeviceAuthenticator,
        registry: ConnectionRegistry,
        acks: AckRecorder,
        sessions: SessionBook,
        metrics: GatewayMetrics,
        sweepers: [ObjectIdentifier: LoopSweeper],
        lot: ParkingLot,
        onDeviceEvent: @escaping @Sendable (DeviceIdentity, ByteBuffer) -> Void,
        logger: Logger
    ) {
        self.configuration = configuration
        self.store = store
        self.authenticator = authenticator
        self.registry = registry
        self.acks = acks
        self.sessions = sessions
        self.metrics = metrics
        self.sweepers = sweepers
        self.lot = lot
        self.onDeviceEvent = onDeviceEvent
        self.logger = logger
        self.throttle = NIOLockedValueBox(ConnectThrottle(configuration: configuration.authThrottle))
        let started = UInt64(Date().timeIntervalSince1970 * 1000)
        self.startedMsgIDFloor = Array(Identifiers.msgIDFloor(milliseconds: started).utf8)
        self.startedLegacyMsgIDTime = Array(Identifiers.legacyMsgIDTime(milliseconds: started).utf8)
    }

    /// Whether a copy of `msgID` may have been sent before this gateway started: its
    /// id (time first, fixed width) sorts below the start, a 19-digit id below the smallest
    /// id of that millisecond, a legacy id by its time half. Ids that are not Herald's, as
    /// in some tests, never are. A few byte compares: it runs for every delivery.
    func mayHaveBeenSentBeforeStart(_ msgID: String) -> Bool {
        let utf8 = msgID.utf8
        let started: [UInt8]
        switch utf8.count {
        case Identifiers.msgIDLength: started = startedMsgIDFloor
        case Identifiers.legacyMsgIDLength: started = startedLegacyMsgIDTime
        default: return false
        }
        return utf8.withContiguousStorageIfAvailable { $0.prefix(started.count).lexicographicallyPrecedes(started) }
            ?? utf8.prefix(started.count).lexicographicallyPrecedes(started)
    }

    func sweeper(for eventLoop: any EventLoop) -> LoopSweeper {
        sweepers[ObjectIdentifier(eventLoop)]!
    }

    /// A new connection's id (``ConnectionHandle/id``).
    func nextConnectionID() -> UInt64 {
        connectionIDs.wrappingAdd(1, ordering: .relaxed).newValue
    }
}

/// The connections of one event loop, checked about once a second for CONNECT and
/// keepalive timeouts and slow consumers, and their acknowledgement deadlines: timers per
/// loop, not per connection or delivery.
final class LoopSweeper: Sendable {
    private let connections: NIOLoopBoundBox<[ObjectIdentifier: MQTTConnectionHandler]>
    /// The acknowledgement deadlines of the loop's deliveries.
    let deadlines: NIOLoopBoundBox<AckDeadlines>
    /// The connections of the loop with writes to flush.
    let flushes: NIOLoopBoundBox<LoopFlushes>
    let eventLoop: any EventLoop
    /// The loop's index in ``ParkingLot/loops``.
    let index: Int

    init(eventLoop: any EventLoop, index: Int) {
        self.eventLoop = eventLoop
        self.index = index
        self.connections = .makeBoxSendingValue([:], eventLoop: eventLoop)
        self.deadlines = .makeBoxSendingValue(AckDeadlines(eventLoop: eventLoop), eventLoop: eventLoop)
        self.flushes = .makeBoxSendingValue(LoopFlushes(eventLoop: eventLoop), eventLoop: eventLoop)
    }

    func add(_ handler: MQTTConnectionHandler) { connections.value[ObjectIdentifier(handler)] = handler }
    func remove(_ handler: MQTTConnectionHandler) { connections.value[ObjectIdentifier(handler)] = nil }

    /// Starts sweeping; returns the task to cancel.
    func start(every interval: TimeAmount = .seconds(1)) -> RepeatedTask {
        eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            let now = NIODeadline.now()
            for handler in self.connections.value.values { handler.sweep(now: now) }
        }
    }

    /// Closes every connection of the loop, parked ones too (on the loop).
    func closeAll(_ context: GatewayContext) -> EventLoopFuture<Int> {
        eventLoop.submit {
            let handlers = Array(self.connections.value.values) + context.promote(context.lot.tickets(loop: self.index))
            for handler in handlers { handler.shutdown() }
            return handlers.count
        }
    }

    /// Closes up to `limit` of the loop's open connections, parked ones last; returns how
    /// many it closed and how many are left open.
    func close(atMost limit: Int, _ context: GatewayContext) -> EventLoopFuture<(closed: Int, open: Int)> {
        eventLoop.submit {
            let live = self.connections.value.values.filter(\.isOpen)
            for handler in live.prefix(max(0, limit)) { handler.shutdown() }
            let parked = context.lot.tickets(loop: self.index)
            let promoted = context.promote(parked.prefix(max(0, limit - live.count)))
            for handler in promoted { handler.shutdown() }
            let closed = min(max(0, limit), live.count) + promoted.count
            return (closed, live.count + parked.count - closed)
        }
    }

    /// Tells the loop's open connections, `perTick` every 100 ms, that their inboxes may
    /// hold copies they weren't told of: each reads its inbox on from what it has (a parked
    /// one is brought back to do so).
    func inboxesMayHaveChanged(perTick: Int, _ context: GatewayContext) {
        eventLoop.execute {
            let connections =
                Array(self.connections.value.values).map(ConnectionRef.live) + context.lot.tickets(loop: self.index).map(ConnectionRef.parked)
            let refs = NIOLoopBound(connections, eventLoop: self.eventLoop)
            self.tellInboxesChanged(refs, from: 0, perTick: max(1, perTick), context)
        }
    }

    private enum ConnectionRef {
        case live(MQTTConnectionHandler)
        case parked(ParkingLot.Ticket)
    }

    private func tellInboxesChanged(_ connections: NIOLoopBound<[ConnectionRef]>, from start: Int, perTick: Int, _ context: GatewayContext) {
        let all = connections.value
        let end = min(all.count, start + perTick)
        for connection in all[start..<end] {
            switch connection {
            case .live(let handler):
                if let ticket = handler.parkedAs {
                    context.wake(ticket, .readable)?.inboxChanged()
                } else if handler.isOpen {
                    handler.inboxChanged()
                }
            case .parked(let ticket): context.wake(ticket, .readable)?.inboxChanged()
            }
        }
        guard end < all.count else { return }
        eventLoop.scheduleTask(in: .milliseconds(100)) { self.tellInboxesChanged(connections, from: end, perTick: perTick, context) }
    }

    /// Connections still open on the loop, parked ones too.
    func count(_ context: GatewayContext) -> EventLoopFuture<Int> {
        eventLoop.submit { self.connections.value.count + context.lot.count(loop: self.index) }
    }
}
