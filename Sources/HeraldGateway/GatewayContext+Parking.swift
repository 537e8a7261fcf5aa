import CoreMetrics
import Logging
import NIOCore
import NIOPosix

/// Bringing parked connections back to a channel: when their device sends more than a
/// PINGREQ, when the lot finds them silent, and when Herald has something for them.
extension GatewayContext {
    /// Runs `body` on the connection's event loop with its handler, brought back from the
    /// lot first if the connection is parked; not at all if it has closed since.
    func withConnection(_ handle: ConnectionHandle, key: RegistrationKey, _ body: @escaping @Sendable (MQTTConnectionHandler) -> Void) {
        handle.eventLoop.execute {
            if let handler = self.handler(handle, key: key) { body(handler) }
        }
    }

    /// On `handle`'s event loop: the handler of its connection, brought back from the lot
    /// if it is parked; nil if the connection has closed or been replaced since.
    func handler(_ handle: ConnectionHandle, key: RegistrationKey) -> MQTTConnectionHandler? {
        var target = handle.target
        // Parked, brought back and parked again, each on this loop: a few turns at most.
        for _ in 0..<8 {
            let ticket: ParkingLot.Ticket
            switch target {
            case .live(let handler):
                guard let parked = handler.parkedAs else { return handler }
                ticket = parked
            case .parked(let parked):
                ticket = parked
            }
            if let handler = wake(ticket, .readable) { return handler }
            // Taken before, on this loop: brought back (the registry says to which handler)
            // or closed.
            guard let current = registry.connection(key), current.id == handle.id else { return nil }
            target = current.target
        }
        return nil
    }

    /// On the connection's event loop: takes the connection out of the lot and gives it a
    /// channel again; a silent one is closed once it has. Nil if it was taken before.
    @discardableResult
    func wake(_ ticket: ParkingLot.Ticket, _ reason: ParkingLot.Wake) -> MQTTConnectionHandler? {
        guard let record = lot.take(ticket) else { return nil }
        metrics.parked.record(lot.count)
        let handler = promote(record)
        if reason == .silent { handler.perform(handler.machine.close(.keepaliveExpired)) }
        return handler
    }

    /// Takes the connections of `tickets` out of the lot, each with a channel again (on
    /// their loop).
    func promote(_ tickets: some Sequence<ParkingLot.Ticket>) -> [MQTTConnectionHandler] {
        tickets.compactMap { wake($0, .readable) }
    }

    /// A handler for the parked connection, registered and swept at once; its channel
    /// comes on the same loop, and what it does meanwhile waits for it.
    private func promote(_ record: ParkedConnection) -> MQTTConnectionHandler {
        let loop = lot.loops[Int(record.loop)]
        let handler = MQTTConnectionHandler(context: self, resuming: record, sweeper: sweeper(for: loop))
        registry.move(record.key, id: record.connectionID, to: .live(handler))
        let bound = NIOLoopBound(handler, eventLoop: loop)
        ClientBootstrap(group: loop)
            .channelOption(.writeBufferWaterMark, value: Gateway.writeBufferWaterMark)
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: Gateway.readSize))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(bound.value) }
            }
            .withConnectedSocket(record.fd)
            .whenFailure { error in
                // The socket couldn't be given a channel: the connection ends here.
                let handler = bound.value
                handler.logger.debug("a parked connection couldn't be brought back", metadata: handler.metadata(["error": "\(error)"]))
                handler.awaitingChannel = nil
                _ = handler.machine.close(.serverShutdown)
                handler.finish()
            }
        return handler
    }
}
